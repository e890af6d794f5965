/// Recognises URL text that is already valid RFC 3986 (`scheme://authority`
/// followed by a path, query and fragment whose every character is allowed
/// raw where it stands, RFC 3986 appendix A), and where its parts are.
///
/// Why by hand: Foundation's `URL(string:)` gives the same answer (such
/// text comes back unchanged, and its parts are these spans) but costs
/// about 3 µs a URL, which a manifest of millions of lines and the cache
/// lookups of a re-run pay twice. Only text this accepts skips Foundation;
/// anything else (non-ASCII, characters to encode, IP-literal hosts, no
/// authority) goes through it. `URISyntaxTests` checks the claim against
/// Foundation on generated URLs.
package struct URISyntax {
    /// UTF-8 offsets.
    let scheme: Range<Int>
    /// Between "//" and the path: `[userinfo@]host[:port]`, host non-empty.
    let authority: Range<Int>
    /// From the end of the authority to the first "?" or "#".
    package let path: Range<Int>
    /// Where the query or fragment starts ("?" or "#"), or the end.
    let pathEnd: Int

    /// `bytes` split as above, or nil when it is not such text.
    package static func parse(_ b: [UInt8]) -> URISyntax? {
        b.withUnsafeBufferPointer { parse($0) }
    }

    /// `parse` on the bytes in place (no bounds checks in a release build).
    package static func parse(_ b: UnsafeBufferPointer<UInt8>) -> URISyntax? {
        let n = b.count
        let s = 0
        // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
        guard n > 0, isAlpha(b[s]) else { return nil }
        var i = s + 1
        while i < s + n, isAlpha(b[i]) || isDigit(b[i]) || b[i] == 0x2B || b[i] == 0x2D || b[i] == 0x2E { i += 1 }
        guard i + 2 < s + n, b[i] == UInt8(ascii: ":"), b[i + 1] == UInt8(ascii: "/"), b[i + 2] == UInt8(ascii: "/") else { return nil }
        let scheme = s..<i
        let authorityStart = i + 3
        var end = authorityStart
        while end < s + n, b[end] != UInt8(ascii: "/"), b[end] != UInt8(ascii: "?"), b[end] != UInt8(ascii: "#") { end += 1 }
        guard validAuthority(b, authorityStart..<end) else { return nil }
        // path *( pchar / "/" ), then "?" query and "#" fragment, each
        // *( pchar / "/" / "?" ); one "#" at most.
        var j = end
        var pathEnd: Int?
        var sawHash = false
        while j < s + n {
            let c = b[j]
            if isPathChar(c) {
                j += 1
                continue
            }
            if c == UInt8(ascii: "%") {
                guard j + 2 < s + n, isHex(b[j + 1]), isHex(b[j + 2]) else { return nil }
                j += 3
                continue
            }
            if c == UInt8(ascii: "?") || c == UInt8(ascii: "#") {
                if pathEnd == nil { pathEnd = j }
                if c == UInt8(ascii: "#") {
                    if sawHash { return nil }
                    sawHash = true
                }
            } else if !(isPchar(c) || c == UInt8(ascii: "/")) {
                return nil
            }
            j += 1
        }
        let pe = pathEnd ?? s + n
        return URISyntax(scheme: scheme, authority: authorityStart..<end, path: end..<pe, pathEnd: pe)
    }

    /// `[ userinfo "@" ] reg-name [ ":" *DIGIT ]` with a non-empty reg-name.
    private static func validAuthority(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Bool {
        var hostStart = r.lowerBound
        var i = r.lowerBound
        // userinfo = *( unreserved / pct-encoded / sub-delims / ":" ): no "@".
        while i < r.upperBound {
            if b[i] == UInt8(ascii: "@") {
                hostStart = i + 1
                break
            }
            i += 1
        }
        if hostStart > r.lowerBound {
            guard validRun(b, r.lowerBound..<(hostStart - 1), allowColon: true) else { return false }
        }
        var hostEnd = hostStart
        while hostEnd < r.upperBound, b[hostEnd] != UInt8(ascii: ":") { hostEnd += 1 }
        guard hostEnd > hostStart, validRun(b, hostStart..<hostEnd, allowColon: false) else { return false }
        if hostEnd < r.upperBound {
            for k in (hostEnd + 1)..<r.upperBound where !isDigit(b[k]) { return false }
        }
        return true
    }

    /// unreserved / pct-encoded / sub-delims (and ":" when asked).
    private static func validRun(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>, allowColon: Bool) -> Bool {
        var i = r.lowerBound
        while i < r.upperBound {
            let c = b[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < r.upperBound, isHex(b[i + 1]), isHex(b[i + 2]) else { return false }
                i += 3
                continue
            }
            guard isRegNameChar(c) || (allowColon && c == UInt8(ascii: ":")) else { return false }
            i += 1
        }
        return true
    }

    /// Whether bit `c` is set in the 128-bit set `low` (bytes 0-63) and
    /// `high` (64-127); nothing above 127 is in a set. Why sets of bits:
    /// the chains of comparisons below cost about 15 instructions a byte
    /// of a manifest URL, a set test about 5 (`URISyntaxTests` checks each
    /// set against those comparisons on all 256 bytes).
    @inline(__always) static func inSet(_ c: UInt8, low: UInt64, high: UInt64) -> Bool {
        c < 64 ? (low &>> UInt64(c)) & 1 != 0 : c < 128 ? (high &>> UInt64(c &- 64)) & 1 != 0 : false
    }
    /// unreserved / sub-delims: `isUnreserved(c) || isSubDelim(c)`.
    @inline(__always) static func isRegNameChar(_ c: UInt8) -> Bool {
        inSet(c, low: 0x2BFF_7FD2_0000_0000, high: 0x47FF_FFFE_87FF_FFFE)
    }
    /// `isPchar(c) || c == "/"`: a path, query or fragment byte that is
    /// neither "%" nor a delimiter ("?", "#").
    @inline(__always) static func isPathChar(_ c: UInt8) -> Bool {
        inSet(c, low: 0x2FFF_FFD2_0000_0000, high: 0x47FF_FFFE_87FF_FFFF)
    }

    package static func isAlpha(_ c: UInt8) -> Bool { (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
    package static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    static func isHex(_ c: UInt8) -> Bool { Hex.value(c) != nil }
    package static func isUnreserved(_ c: UInt8) -> Bool {
        isAlpha(c) || isDigit(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "~")
    }
    /// "!" "$" "&" "'" "(" ")" "*" "+" "," ";" "="
    package static func isSubDelim(_ c: UInt8) -> Bool {
        switch c {
        case 0x21, 0x24, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B, 0x2C, 0x3B, 0x3D: return true
        default: return false
        }
    }
    /// pchar without pct-encoded (handled by the caller).
    static func isPchar(_ c: UInt8) -> Bool {
        isUnreserved(c) || isSubDelim(c) || c == UInt8(ascii: ":") || c == UInt8(ascii: "@")
    }
}
