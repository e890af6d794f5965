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
            // Bytes: String.hasPrefix compares Characters, and "http://"
            // followed by a combining mark is not a Character prefix.
            let lower = Array(e.url.utf8.prefix(8)).map { $0 | 0x20 }
            invariant(lower.starts(with: Array("http://".utf8).map { $0 | 0x20 }) || lower.starts(with: Array("https://".utf8)),
                      "accepted a non-http(s) URL")
            invariant(!e.key.isEmpty, "empty key")
            // The userinfo (between "://" and the authority's last "@")
            // never survives redaction: in the redacted URL's authority,
            // what comes before its last "@" is exactly "***".
            let u = Array(e.url.utf8)
            let start = lower.count == 8 && lower[4] == UInt8(ascii: "s") ? 8 : 7  // https:// or http://
            var end = start
            while end < u.count && !"/?#".utf8.contains(u[end]) { end += 1 }
            if u[start..<end].contains(UInt8(ascii: "@")) {
                let whole = Array(Redaction.url(e.url).utf8)
                let authority = Array(whole[start...].prefix { !"/?#".utf8.contains($0) })
                let at = authority.lastIndex(of: UInt8(ascii: "@"))
                invariant(at.map { Array(authority[..<$0]) == Array("***".utf8) } == true, "userinfo survived redaction")
            }
        case .problem(let p):
            // Reasons are printed to a terminal: one line, no control
            // characters (ANSI escapes).
            invariant(!p.reason.isEmpty, "empty reason")
            invariant(!p.reason.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character in \(p.reason.debugDescription)")
        }
    }
    return 0
}
