// In Cache: a layout states it (`CacheLayout.manifestKeyRule`); the
// manifest reader applies it.

/// The key rule of a layout keyed by the URL itself as the library
/// canonicalises it (OkHttp's `HttpUrl.toString()`): no `key=`, no
/// `--key-strip-query`, no credentials in the URL. `key` is given the
/// manifest's text of the URL (`ParsedURL.text`).
public struct ManifestKeyRule: Sendable {
    public var layout: String
    /// Why the URL is the key, for the refusals.
    public var why: String
    public var key: @Sendable (String) -> String
    public init(layout: String, why: String, key: @escaping @Sendable (String) -> String) {
        self.layout = layout
        self.why = why
        self.key = key
    }
}
