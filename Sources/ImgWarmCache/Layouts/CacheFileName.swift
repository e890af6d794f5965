import Crypto
import Foundation
import ImgWarmSupport

/// SDWebImage's `SDDiskCacheFileNameForKey` (`SDDiskCache.m`, 5.21.5): the
/// name of the file that holds the entry for a cache key, as apps using
/// SDWebImage 5.x compute it.
///
/// The name is `<md5>` plus `.` and `[NSURL URLWithString:key].pathExtension`
/// (or, when that is nil, `key.pathExtension`). That extension depends on
/// which URL parser the app runs on: CoreFoundation's RFC 1808 parser before
/// iOS 17 (`LegacyCFURL`), swift-foundation's RFC 3986 parser for apps
/// linked on iOS 17 or later (`ModernURL`). Each app tries `<md5>.<ext>`
/// then the bare `<md5>` (`dataForKey:` falls back to
/// `stringByDeletingPathExtension`), so imgwarm writes `<md5>.<ext>` only
/// when every parser gives the same, ordinary extension, and the bare
/// `<md5>` otherwise: the one name they all find.
public struct CacheFileName: Equatable, Sendable {
    /// 32 lowercase hex digits of MD5(key).
    public let md5: String
    /// The extension an app linked on iOS 17 or later appends (after
    /// NUL/`:` removal and the 222-character limit), or nil when none.
    public let sdExtension: String?
    /// Every extension some SDWebImage 5.x app may append, `sdExtension`
    /// first, then a pre-iOS 17 app's.
    public let extensions: [String]
    /// Whether all parsers agree: the extension is nil or the same for all.
    private let agreed: Bool

    /// SDWebImage drops extensions longer than 255 - 32 - 1 characters.
    public static let maxExtensionLength = 222

    public init(key: String) {
        self.init(md5Digest: Self.digest(ofKey: key), key: key)
    }

    /// The name for `key` whose MD5 (`digest(ofKey:)`) is already known: a
    /// run hashes each key once, when it reads the manifest.
    public init<D: Sequence>(md5Digest digest: D, key: String) where D.Element == UInt8 {
        md5 = Hex.encode(digest)
        if let ext = Self.plainURLExtension(key) {
            sdExtension = ext
            extensions = [ext]
            agreed = true
        } else {
            (sdExtension, extensions, agreed) = Self.readExtensions(key)
        }
    }

    /// Every parser's reading of `key`: the iOS 17+ extension, all distinct
    /// extensions (that one first), and whether they all agree.
    static func readExtensions(_ key: String) -> (sdExtension: String?, extensions: [String], agreed: Bool) {
        let keyBytes = Array(key.utf8)
        let modern = ModernURL.extensions(ofKey: key, keyBytes).map(Self.sanitized)
        let legacy = LegacyCFURL.extensions(ofKey: key, keyBytes).map(Self.sanitized)
        var all: [String] = []
        var sawNone = false
        for e in modern + legacy {
            guard let e else { sawNone = true; continue }
            if !all.contains(e) { all.append(e) }
        }
        return (modern[0], all, all.count + (sawNone ? 1 : 0) == 1)
    }

    /// The extension of a key that is a plain URL, nearly every manifest's:
    /// `http://` or `https://`, a host of letters, digits, `.` and `-` with
    /// an optional `:port`, and a path of letters, digits, `-`, `_`, `~`,
    /// `.` and `/` (no query, fragment, escape or userinfo) whose last
    /// component neither starts nor ends with `.` and has one inside. Every
    /// reading in `readExtensions` then gives the text after the last `.`:
    /// the URL is valid RFC 3986 text, so swift-foundation keeps it and
    /// CFURL accepts it; both take the same path and last component; none
    /// of its characters is one that ends an extension or that sanitizing
    /// removes. That reading costs about 10,000 instructions a key
    /// (callgrind), this one scan a few hundred. Nil for any other key: the
    /// full reading decides (`readExtensions`; ParsedURLTests compare both).
    static func plainURLExtension(_ key: String) -> String? {
        var key = key
        return key.withUTF8 { b -> String? in
            // Bytes compared in place and tested against sets of bits: the
            // generic prefix test and chains of comparisons cost about
            // 1,600 instructions a key (callgrind), this about 800.
            let n = b.count
            guard n >= 8, b[0] == UInt8(ascii: "h"), b[1] == UInt8(ascii: "t"), b[2] == UInt8(ascii: "t"),
                  b[3] == UInt8(ascii: "p") else { return nil }
            var i: Int
            if b[4] == UInt8(ascii: ":"), b[5] == UInt8(ascii: "/"), b[6] == UInt8(ascii: "/") {
                i = 7
            } else if b[4] == UInt8(ascii: "s"), b[5] == UInt8(ascii: ":"), b[6] == UInt8(ascii: "/"), b[7] == UInt8(ascii: "/") {
                i = 8
            } else {
                return nil
            }
            let hostStart = i
            while i < n, isPlainHostChar(b[i]) { i += 1 }
            guard i > hostStart, i < n else { return nil }
            if b[i] == UInt8(ascii: ":") {
                i += 1
                while i < n, b[i] >= UInt8(ascii: "0") && b[i] <= UInt8(ascii: "9") { i += 1 }
            }
            guard i < n, b[i] == UInt8(ascii: "/") else { return nil }
            var componentStart = i + 1
            var lastDot = -1
            while i < n {
                let c = b[i]
                if isPlainPathChar(c) {
                    // A letter, digit, "-", "_" or "~".
                } else if c == UInt8(ascii: "/") {
                    componentStart = i + 1
                    lastDot = -1
                } else if c == UInt8(ascii: ".") {
                    lastDot = i
                } else {
                    return nil
                }
                i += 1
            }
            guard componentStart < b.count, b[componentStart] != UInt8(ascii: "."), lastDot > componentStart,
                  lastDot < b.count - 1, b.count - lastDot - 1 <= maxExtensionLength else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: b[(lastDot + 1)...]), as: UTF8.self)
        }
    }

    /// `URISyntax.inSet`, here again: a call into another module per byte
    /// is not inlined and cost 700 k instructions a 2,000-line manifest.
    @inline(__always) private static func inSet(_ c: UInt8, low: UInt64, high: UInt64) -> Bool {
        c < 64 ? (low &>> UInt64(c)) & 1 != 0 : c < 128 ? (high &>> UInt64(c &- 64)) & 1 != 0 : false
    }

    /// A host byte of a plain URL: a letter, a digit, "." or "-".
    @inline(__always) static func isPlainHostChar(_ c: UInt8) -> Bool {
        inSet(c, low: 0x03FF_6000_0000_0000, high: 0x07FF_FFFE_07FF_FFFE)
    }
    /// A path byte of a plain URL other than "/" and ".": a letter, a
    /// digit, "-", "_" or "~".
    @inline(__always) static func isPlainPathChar(_ c: UInt8) -> Bool {
        inSet(c, low: 0x03FF_2000_0000_0000, high: 0x47FF_FFFE_87FF_FFFE)
    }

    /// What `SDSanitizeFileNameString` and the length check leave of an
    /// extension: NUL and `:` removed; nil when empty or longer than 222
    /// UTF-16 units (`NSString.length`).
    static func sanitized(_ ext: String?) -> String? {
        guard var e = ext else { return nil }
        // Checked first: removeAll copies the string even when it removes nothing.
        if e.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: ":") }) { e.removeAll { $0 == "\0" || $0 == ":" } }
        return e.isEmpty || e.utf16.count > maxExtensionLength ? nil : e
    }

    /// MD5 of the key as SDWebImage hashes it: `key.UTF8String` with
    /// strlen(), so a key with an embedded NUL is hashed up to that NUL.
    public static func digest(ofKey key: String) -> Insecure.MD5Digest {
        var bytes = Array(key.utf8)
        if let nul = bytes.firstIndex(of: 0) { bytes.removeSubrange(nul...) }
        return Insecure.MD5.hash(data: bytes)
    }

    /// `digest(ofKey:)` as two little-endian words (its bytes 0-7 and
    /// 8-15), hashed in place by `MD5`: what a plan keeps of each entry.
    public static func digestWords(ofKey key: String) -> (UInt64, UInt64) {
        var key = key
        return key.withUTF8 { b in
            guard let base = b.baseAddress else { return MD5.digest(b) }
            let nul = memchr(base, 0, b.count).map { UnsafeRawPointer(base).distance(to: UnsafeRawPointer($0)) }
            return MD5.digest(UnsafeBufferPointer(rebasing: b[..<(nul ?? b.count)]))
        }
    }

    /// The name an app linked on iOS 17 or later looks up first.
    public var sdName: String {
        guard let ext = sdExtension else { return md5 }
        return md5 + "." + ext
    }

    /// The name imgwarm writes: `<md5>.<ext>` when every parser gives that
    /// extension and a filesystem, a shell or another Foundation could not
    /// spell it differently (spaces, `%`, non-ASCII); else the bare `<md5>`.
    public var storedName: String {
        guard agreed, let ext = extensions.first, Self.isPortableExtension(ext) else { return md5 }
        return Self.join(md5, ext)
    }

    /// Names an app may find the entry under: each `<md5>.<ext>`, then the
    /// bare `<md5>` every app tries last.
    public var lookupNames: [String] {
        var names: [String] = []
        names.reserveCapacity(extensions.count + 1)
        for ext in extensions { names.append(Self.join(md5, ext)) }
        names.append(md5)
        return names
    }

    /// `storedName` and `lookupNames` at once: the stored name is one of
    /// the lookup names (the first, or the bare MD5), built once.
    public var names: (stored: String, lookup: [String]) {
        let lookup = lookupNames
        let stored = agreed && !extensions.isEmpty && Self.isPortableExtension(extensions[0]) ? lookup[0] : md5
        return (stored, lookup)
    }

    /// `md5 + "." + ext` in one allocation, its bytes copied once (three
    /// appends to a reserved string cost about 600 instructions a name).
    static func join(_ md5: String, _ ext: String) -> String {
        let joined = md5.utf8.withContiguousStorageIfAvailable { m in
            ext.utf8.withContiguousStorageIfAvailable { e in
                String(unsafeUninitializedCapacity: m.count + 1 + e.count) { out in
                    _ = out.initialize(fromContentsOf: m)
                    out[m.count] = UInt8(ascii: ".")
                    _ = out[(m.count + 1)...].initialize(fromContentsOf: e)
                    return m.count + 1 + e.count
                }
            }
        }
        if let name = joined.flatMap({ $0 }) { return name }
        var name = ""
        name.reserveCapacity(md5.utf8.count + 1 + ext.utf8.count)
        name += md5
        name += "."
        name += ext
        return name
    }

    static func isPortableExtension(_ ext: String) -> Bool {
        ext.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x5F || c == 0x2D || c == 0x2B || c == 0x7E
        }
    }

    /// Percent-decodes `s` (every escape). Nil when an escape is malformed;
    /// invalid UTF-8 gives nil (`strict`) or U+FFFD (`!strict`).
    static func percentDecode(_ s: ArraySlice<UInt8>, strict: Bool) -> String? {
        var out = [UInt8]()
        out.reserveCapacity(s.count)
        var i = s.startIndex
        while i < s.endIndex {
            if s[i] == UInt8(ascii: "%") {
                guard i + 2 < s.endIndex, let h = Hex.value(s[i + 1]), let l = Hex.value(s[i + 2]) else { return nil }
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(s[i])
                i += 1
            }
        }
        return strict ? String(validating: out, as: UTF8.self) : String(decoding: out, as: UTF8.self)
    }

    /// Characters that end or forbid a path extension in CoreFoundation
    /// (`CFUtilities.c`, `__IsInvalidExtensionCharacter`) and swift-foundation
    /// (`Span+Path.swift`, `invalidExtensionScalars`): space, `/`, and the
    /// Unicode bidi controls.
    static func isInvalidExtensionCharacter(_ c: UInt32) -> Bool {
        switch c {
        case 0x20, 0x2F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// `NSString.pathExtension` of `key`, the fallback SDWebImage takes when
    /// the URL gives none: both spellings of the rule, because Apple's
    /// NSString is not open source. swift-corelibs-foundation
    /// (`NSPathUtilities.swift`, `pathExtension`): slashes collapsed, one
    /// trailing `/` dropped, the text after the last `.` of the last
    /// component unless that `.` starts it. CoreFoundation's rule on that
    /// component (`CFUtilities.c`, `__GetPathExtensionRangesFromPathComponentBuffer`)
    /// also refuses a space, `/` or bidi control after the dot.
    static func stringPathExtensions(_ key: String) -> [String?] {
        var collapsed: [Unicode.Scalar] = []
        for scalar in key.unicodeScalars where !(scalar == "/" && collapsed.last == "/") { collapsed.append(scalar) }
        if collapsed.count > 1 && collapsed.last == "/" { collapsed.removeLast() }
        guard collapsed.count > 1 else { return [nil] }
        let componentStart = (collapsed.lastIndex(of: "/") ?? -1) + 1
        let component = Array(collapsed[componentStart...])
        // corelibs: the last "." not at the component's start; ".." is none.
        var corelibs: String?
        if let dot = component.lastIndex(of: "."), dot > 0, !(component.count == 2 && component[0] == ".") {
            corelibs = string(component[(dot + 1)...])
        }
        return [corelibs, cfComponentExtension(string(component))]
    }

    static func string<S: Sequence>(_ scalars: S) -> String where S.Element == Unicode.Scalar {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    /// `_CFGetPathExtensionRangesFromPathComponent` (`CFUtilities.c`): from the
    /// end back to (not including) the first UTF-16 unit, the first `.` wins
    /// unless it is the last unit; a space, `/` or bidi control met first
    /// means none.
    static func cfComponentExtension(_ component: String) -> String? {
        var component = component
        if case .ascii(let ext) = component.withUTF8(asciiComponentExtension) { return ext }
        return utf16ComponentExtension(Array(component.utf16))
    }

    /// `cfComponentExtension` on the component's UTF-16 units.
    static func utf16ComponentExtension(_ units: [UInt16]) -> String? {
        var i = units.count - 1
        while i > 0 {
            let c = units[i]
            if c == 0x2E {  // "."
                guard i != units.count - 1 else { return nil }
                return String(decoding: units[(i + 1)...], as: UTF16.self)
            }
            if isInvalidExtensionCharacter(UInt32(c)) { return nil }
            i -= 1
        }
        return nil
    }
}

extension CacheFileName {
    enum ASCIIExtension {
        case ascii(String?)
        case notASCII
    }

    /// `cfComponentExtension` of an ASCII component (nearly every URL's),
    /// read from its bytes: they are its UTF-16 units, and the copies into
    /// and out of UTF-16 were most of a name's cost (callgrind: 5,000
    /// instructions a key). `.notASCII` leaves it to the general rule.
    static func asciiComponentExtension(_ u: UnsafeBufferPointer<UInt8>) -> ASCIIExtension {
        if u.contains(where: { $0 >= 0x80 }) { return .notASCII }
        var i = u.count - 1
        while i > 0 {
            let c = u[i]
            if c == 0x2E {  // "."
                guard i != u.count - 1 else { return .ascii(nil) }
                return .ascii(String(decoding: UnsafeBufferPointer(rebasing: u[(i + 1)...]), as: UTF8.self))
            }
            if isInvalidExtensionCharacter(UInt32(c)) { return .ascii(nil) }
            i -= 1
        }
        return .ascii(nil)
    }
}

/// `[NSURL URLWithString:key].pathExtension` before iOS 17: CoreFoundation's
/// CFURL, read from swift-corelibs-foundation (`CFURL.c`, `CFURL.inc.h`).
/// Written out here because no library on Linux runs that parser: Foundation
/// on Linux is swift-foundation's RFC 3986 one (used for `ModernURL`).
enum LegacyCFURL {
    /// The extensions such an app may append for `key`: the URL's, or when
    /// it has none (or `URLWithString:` returns nil) `key.pathExtension`.
    static func extensions(ofKey key: String, _ b: [UInt8]) -> [String?] {
        if accepts(b), let ext = urlPathExtension(b) { return [ext] }
        // NSURL.pathExtension is nil here; should an SDK return "" instead,
        // SDWebImage skips the fallback and appends nothing: nil is a
        // candidate too.
        return CacheFileName.stringPathExtensions(key) + [nil]
    }

    /// `_CFURLCreateWithURLString`'s legal-character check: the
    /// characters of `sURLValidCharacters` marked VALID, `[` and `]`, one
    /// `#`, and `%` followed by two hex digits.
    static func accepts(_ b: [UInt8]) -> Bool {
        var sawHash = false
        var i = 0
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < b.count, Hex.value(b[i + 1]) != nil, Hex.value(b[i + 2]) != nil else { return false }
                i += 3
                continue
            }
            if c == UInt8(ascii: "#") {
                if sawHash { return false }
                sawHash = true
            } else if !(c == UInt8(ascii: "[") || c == UInt8(ascii: "]") || URISyntax.isUnreserved(c) || URISyntax.isSubDelim(c)
                        || c == UInt8(ascii: ":") || c == UInt8(ascii: "/") || c == UInt8(ascii: "?") || c == UInt8(ascii: "@")) {
                return false
            }
            i += 1
        }
        return true
    }

    /// The path range as `_parseComponents` finds it (`CFURL.inc.h`):
    /// fragment at the first `#`, scheme up to `:` (then a `/` must follow,
    /// or the URL has no path), authority after `//` up to `/` or `?`, query
    /// at the first `?`. Parameters (`;`) stay in the path.
    static func pathRange(_ b: [UInt8]) -> Range<Int>? {
        var length = b.firstIndex(of: UInt8(ascii: "#")) ?? b.count
        var base = 0
        var hasScheme = false
        if length > 0, (URISyntax.isAlpha(b[0])) || b[0] == UInt8(ascii: ":") {
            var i = 0
            while i < length {
                let c = b[i]
                if c == UInt8(ascii: ":") {
                    hasScheme = true
                    base = i + 1
                    break
                }
                guard URISyntax.isAlpha(c) || URISyntax.isDigit(c) || c == 0x2B || c == 0x2D || c == 0x2E else { break }
                i += 1
            }
        }
        if hasScheme && (base == length || b[base] != UInt8(ascii: "/")) { return nil }
        var hasAuthority = false
        if length - base >= 2, b[base] == UInt8(ascii: "/"), b[base + 1] == UInt8(ascii: "/") {
            var i = base + 2
            while i < length, b[i] != UInt8(ascii: "/"), b[i] != UInt8(ascii: "?") { i += 1 }
            hasAuthority = i != base + 2
            base = i
        }
        if let q = b[base..<length].firstIndex(of: UInt8(ascii: "?")) { length = q }
        guard length - base != 0 || hasAuthority else { return nil }
        return base..<length
    }

    /// `CFURLCopyPathExtension`: the last path component
    /// (`_rangeOfLastPathComponent`: one trailing `/` dropped), percent-
    /// decoded when the path holds a `%` (nil when it is not UTF-8), then
    /// `_CFGetPathExtensionRangesFromPathComponent`.
    static func urlPathExtension(_ b: [UInt8]) -> String? {
        guard let path = pathRange(b), !path.isEmpty else { return nil }
        var end = path.upperBound
        if b[end - 1] == UInt8(ascii: "/") {
            end -= 1
            if end == path.lowerBound { return nil }  // the component "/"
        }
        let start = (b[path.lowerBound..<end].lastIndex(of: UInt8(ascii: "/")) ?? (path.lowerBound - 1)) + 1
        let component: String
        if b[path].contains(UInt8(ascii: "%")) {
            guard let decoded = CacheFileName.percentDecode(b[start..<end], strict: true) else { return nil }
            component = decoded
        } else {
            component = String(decoding: b[start..<end], as: UTF8.self)
        }
        return CacheFileName.cfComponentExtension(component)
    }
}

/// `URL(string: key).pathExtension` for apps linked on iOS 17 or later:
/// swift-foundation (`URL_Swift.swift` and `URL_Impl.swift`, `pathExtension`;
/// `String+Path.swift` and `Span+Path.swift` for the rules).
enum ModernURL {
    /// The extensions such an app may append for `key`. The whole path is
    /// percent-decoded, trailing slashes dropped, and the extension taken
    /// from the last component. The two implementations differ when the
    /// decoded path is not UTF-8: `_SwiftURL` then has the path "" (no
    /// extension), `_URL` repairs it with U+FFFD: both are candidates.
    static func extensions(ofKey key: String, _ b: [UInt8]) -> [String?] {
        let encodedPath: ArraySlice<UInt8>
        if let syntax = URISyntax.parse(b) {
            // Valid as it is: URL(string:) leaves it, and the path is this.
            encodedPath = b[syntax.path]
        } else if let url = URL(string: key) {
            encodedPath = ArraySlice(Array(url.path(percentEncoded: true).utf8))
        } else {
            // `URLWithString:` nil: SDWebImage takes `key.pathExtension`.
            return CacheFileName.stringPathExtensions(key)
        }
        if !encodedPath.contains(UInt8(ascii: "%")) {
            return [pathExtension(String(decoding: encodedPath, as: UTF8.self))]
        }
        let strict = CacheFileName.percentDecode(encodedPath, strict: true).map(pathExtension) ?? nil
        let lossy = CacheFileName.percentDecode(encodedPath, strict: false).map(pathExtension) ?? nil
        return strict == lossy ? [strict] : [strict, lossy]
    }

    /// The extension of a decoded path: none when the last component (after
    /// dropping trailing slashes) ends with `.`, has no `.`, starts with its
    /// last `.`, is `.`/`..` before it, or holds a space, `/` or bidi
    /// control after it (`pathExtensionDotIndex`, `validatePathExtension`).
    static func pathExtension(_ path: String) -> String? {
        // UTF-8 bytes: "/" and "." are ASCII and never inside a multi-byte
        // sequence, so slicing at them keeps the text whole.
        var path = path
        return path.withUTF8 { u -> String? in
            var end = u.count
            while end > 1 && u[end - 1] == UInt8(ascii: "/") { end -= 1 }
            var start = end
            while start > 0 && u[start - 1] != UInt8(ascii: "/") { start -= 1 }
            guard let dot = u[start..<end].lastIndex(of: UInt8(ascii: ".")), dot != start, dot != end - 1 else { return nil }
            let stem = dot - start
            if (stem == 1 || stem == 2) && u[start..<dot].allSatisfy({ $0 == UInt8(ascii: ".") }) { return nil }
            let ext = String(decoding: UnsafeBufferPointer(rebasing: u[(dot + 1)..<end]), as: UTF8.self)
            if ext.unicodeScalars.contains(where: { CacheFileName.isInvalidExtensionCharacter($0.value) }) { return nil }
            return ext
        }
    }
}
