"""Where each service's APIs are and who is asking, for one run: from the lookup settings and the registry.

A base URL comes from the settings (`service_urls`: the command line or a config file
put it there), else the API's environment variable, else its default; it must be a
bare http(s) base URL. The email goes to NCBI and Crossref; NCBI_API_KEY only to the
E-utilities, in a POST body (the HTTP client masks it in every message).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from clinaudit.core.errors import InputError
from clinaudit.lookup.services import Api, Caller, Mapping, Service, is_mapping
from clinaudit.options import LookupSettings

if TYPE_CHECKING:
    from clinaudit.lookup.http import Endpoint

SAFETY = 1.1  # pace a little under each published limit, so clock skew never trips it


def _services() -> tuple[type[Service], ...]:
    from clinaudit.lookup.services.registry import SERVICES

    return SERVICES


class Network:
    def __init__(self, urls: dict[str, str], caller: Caller, services: tuple[type[Service], ...]) -> None:
        self.urls = urls  # API name → base URL, without a trailing slash
        self.caller = caller
        self.services = services
        self._made: dict[str, Service] = {}

    @classmethod
    def of(cls, options: LookupSettings, services: tuple[type[Service], ...] | None = None) -> Network:
        """From the lookup settings' `service_urls` and `email`, the environment and the services' defaults."""
        services = services if services is not None else _services()
        given = dict(options.service_urls or ())
        urls = {}
        for api in apis(services):
            url = (given.get(api.name) or os.environ.get(api.env, "")).strip() or api.default_url
            urls[api.name] = checked_url(url, api.env if api.name not in given else api.key)
        email = options.email or os.environ.get("CLINAUDIT_EMAIL", "").strip() or None
        key = os.environ.get("NCBI_API_KEY", "").strip() or None
        keyed = {api.name for api in apis(services) if api.keyed_rate}  # the APIs a key is sent to
        if key and keyed & set(options.keyless_urls):
            key = None  # a found config file chose where those requests go: they go without the key
        return cls(urls, Caller(email, key), services)

    def service(self, name: str) -> Service:
        """The service of that name, made once with the caller."""
        made = self._made.get(name)
        if made is None:
            made = self._made[name] = next(s for s in self.services if s.name == name)(self.caller)
        return made

    def mapping(self, name: str) -> Mapping | None:
        """The service of that name when it is a mapping service (its answers name another id), else None."""
        service = self.service(name)
        return service if is_mapping(service) else None

    def endpoints(self) -> list[Endpoint]:
        """Each API's base URL, pace and body cap; a body over its cap is malformed, and the run goes on."""
        from clinaudit.lookup.http import Endpoint

        out = []
        for api in apis(self.services):
            rate = api.keyed_rate if self.caller.api_key and api.keyed_rate else api.rate
            interval = SAFETY / rate if rate else 0.0
            out.append(Endpoint(api.name, self.urls[api.name], interval, api.concurrency, api.max_bytes))
        return out

    def interval(self, name: str) -> float:
        return next(e.interval for e in self.endpoints() if e.name == name)

    @property
    def secrets(self) -> list[str]:
        return [self.caller.api_key or ""]


def apis(services: Iterable[type[Service]]) -> tuple[Api, ...]:
    """Every API the services call, each once, in their order."""
    return tuple({api.name: api for service in services for api in service.apis}.values())


def checked_url(url: str, name: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise InputError(f"{name} must be an http(s) base URL without a query, not {url!r}")
    return url.rstrip("/")
