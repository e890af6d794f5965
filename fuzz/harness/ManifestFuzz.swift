// libFuzzer entry point for the manifest line parser. Compiled together
// with Sources/ImgWarmKit/Prefetch/Manifest.swift and the few files it
// needs (scripts/fuzz.sh), so `parse(line:source:)` is reachable.

/// Fails the run (libFuzzer reports it as a crash with the input saved).
func invariant(_ ok: Bool, _ what: @autoclosure () -> String) {
    if !ok { fatalError("invariant broken: \(what())") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func manifestFuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = [UInt8](UnsafeBufferPointer(start: data, count: count))
    let source = ManifestSource(fileIndex: 0, line: 1)
    for strip in [false, true] {
        var options = ManifestOptions()
        options.stripQueryFromKeys = strip
        switch ManifestReader(options: options).parse(line: bytes, source: source) {
        case .none:
            break
        case .entry(let e):
            invariant(ManifestReader.urlProblem(e.url) == nil, "accepted an unusable URL")
            let lower = e.url.lowercased()
            invariant(lower.hasPrefix("http://") || lower.hasPrefix("https://"), "accepted a non-http(s) URL")
            invariant(!e.key.isEmpty, "empty key")
            _ = Redaction.url(e.url)
        case .problem(let p):
            // Reasons are printed to a terminal: one line, no control
            // characters (ANSI escapes), and never a URL's password.
            invariant(!p.reason.isEmpty, "empty reason")
            invariant(!p.reason.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character in \(p.reason.debugDescription)")
        }
    }
    return 0
}
