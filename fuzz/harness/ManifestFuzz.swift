@testable import ImgWarmSupport
@testable import ImgWarmCache
@testable import ImgWarmWarm
import CCurl

// libFuzzer entry point for the manifest line parser
// (Sources/ImgWarmWarm/Manifest.swift), built against the engine's
// targets with testing enabled (scripts/fuzz.sh), so `parse(line:source:)`
// is reachable.

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
            // The entry's URL is the app's: parsing it again gives itself
            // (percent-encoding is idempotent) and libcurl accepts it.
            guard case .success(let again) = ParsedURL.parse(e.url) else {
                invariant(false, "accepted an unusable URL")
                return 0
            }
            invariant(again.absolute == e.url && !again.reencoded, "the app's URL re-encodes again")
            // Bytes: String.hasPrefix compares Characters, and "http://"
            // followed by a combining mark is not a Character prefix.
            let lower = Array(e.url.utf8.prefix(8)).map { $0 | 0x20 }
            invariant(lower.starts(with: Array("http://".utf8).map { $0 | 0x20 }) || lower.starts(with: Array("https://".utf8)),
                      "accepted a non-http(s) URL")
            invariant(!e.key.isEmpty, "empty key")
            // Credentials never survive redaction: libcurl finds only the
            // mask where they were.
            if again.hasCredentials {
                let redacted = Redaction.url(e.url)
                guard case .success(let curl) = CurlURL.parse(redacted, lenient: true) else {
                    invariant(false, "redacted URL does not parse: \(redacted.debugDescription)")
                    return 0
                }
                invariant(curl.part(CURLUPART_USER) == Redaction.mask && curl.part(CURLUPART_PASSWORD) == nil,
                          "userinfo survived redaction")
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
