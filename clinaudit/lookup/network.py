"""Where each service's APIs are and who is asking, for one run: from the lookup settings and the registry.

A base URL comes from the settings (`service_urls`: a config file's `<api>-url` or the
`CLINAUDIT_<API>_URL` variable put it there, clinaudit/run/settings.py), else its default;
it must be a bare http(s) base URL. The email goes to NCBI and Crossref; NCBI_API_KEY only to the
E-utilities, in a POST body (the HTTP client masks it in every message).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from clinaudit.core.errors import InputError
from clinaudit.lookup.services import Api, Caller, Mapper, Service, is_mapping
from clinaudit.options import LookupSettings, Secrets

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
    def of(
        cls, options: LookupSettings, secrets: Secrets | None = None, services: tuple[type[Service], ...] | None = None
    ) -> Network:
        """From the lookup settings' `service_urls` and `email`, the run's NCBI key and the services' defaults.

        The settings hold every URL the command line, the environment and a config file gave
        (clinaudit/run/settings.py); an API none of them moved keeps its default.
        """
        services = services if services is not None else _services()
        given = dict(options.service_urls or ())
        urls = {}
        for api in apis(services):
            url = given.get(api.name, "").strip() or api.default_url
            urls[api.name] = checked_url(url, api.key if api.name in given else api.name)
        key = secrets.ncbi_api_key if secrets is not None else None
        return cls(urls, Caller(options.email, key), services)

    def service(self, name: str) -> Service:
        """The service of that name, made once with the caller."""
        made = self._made.get(name)
        if made is None:
            made = self._made[name] = next(s for s in self.services if s.name == name)(self.caller)
        return made

    def mapping(self, name: str) -> Mapper | None:
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
