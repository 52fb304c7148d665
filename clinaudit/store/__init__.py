"""What clinaudit writes and reads back: atomic writes, the one JSON form of stored records, the cache directory's
folders, YAML parsed once per content. On the ground floor, beside `core`: any stage may keep things with it."""
