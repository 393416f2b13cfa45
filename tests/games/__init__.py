"""Games that exist for tests only, added through the registry's extension points."""
