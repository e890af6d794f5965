import Crypto

/// SDWebImage's `SDDiskCacheFileNameForKey`: the name of the file that holds
/// the entry for a cache key, as an app using SDWebImage 5.x computes it.
public struct CacheFileName: Equatable, Sendable {
    /// 32 lowercase hex digits of MD5(key).
    public let md5: String
    /// The extension SDWebImage appends (after NUL/`:` removal and the
    /// 222-character limit), or nil when it appends none.
    public let sdExtension: String?

    /// SDWebImage drops extensions longer than 255 - 32 - 1 characters.
    public static let maxExtensionLength = 222

    public init(key: String) {
        // SDWebImage hashes `key.UTF8String` with strlen(): a key with an
        // embedded NUL is hashed up to that NUL. Match it byte for byte.
        var bytes = Array(key.utf8)
        if let nul = bytes.firstIndex(of: 0) { bytes.removeSubrange(nul...) }
        md5 = Self.hex(Insecure.MD5.hash(data: bytes))
        var ext = CacheFileName.pathExtension(ofKey: key)
        ext.removeAll { $0 == "\0" || $0 == ":" }
        // NSString.length counts UTF-16 code units.
        sdExtension = (ext.isEmpty || ext.utf16.count > Self.maxExtensionLength) ? nil : ext
    }

    /// The name SDWebImage looks up first: `<md5>.<ext>` or `<md5>`.
    public var sdName: String {
        guard let ext = sdExtension else { return md5 }
        return md5 + "." + ext
    }

    /// The name imgwarm writes. SDWebImage falls back to the bare MD5 when
    /// `<md5>.<ext>` is missing, so for an extension that a filesystem,
    /// a shell or another Foundation version could spell differently
    /// (spaces, `%`, non-ASCII, `/`), the bare name is the one that every
    /// reader finds.
    public var storedName: String {
        guard let ext = sdExtension, Self.isPortableExtension(ext) else { return md5 }
        return md5 + "." + ext
    }

    /// Names a reader may find the entry under, in lookup order.
    public var lookupNames: [String] {
        sdExtension == nil ? [md5] : [sdName, md5]
    }

    static func isPortableExtension(_ ext: String) -> Bool {
        ext.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x5F || c == 0x2D || c == 0x2B || c == 0x7E
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(32)
        for b in digest {
            out.append(hexDigits[Int(b >> 4)])
            out.append(hexDigits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `keyURL ? keyURL.pathExtension : key.pathExtension`.
    static func pathExtension(ofKey key: String) -> String {
        if let path = URLKey.percentDecodedPath(of: key) {
            return pathExtension(ofPath: path)
        }
        return pathExtension(ofPath: key)
    }

    /// NSString.pathExtension: the text after the last `.` of the last path
    /// component, trailing `/` ignored; none for `.hidden` or `name.`.
    static func pathExtension(ofPath path: String) -> String {
        // Byte-level: `/` and `.` are ASCII and never part of a multi-byte
        // UTF-8 sequence, so slicing at them keeps the text valid.
        let u = Array(path.utf8)
        var end = u.count
        while end > 1 && u[end - 1] == UInt8(ascii: "/") { end -= 1 }
        var start = end
        while start > 0 && u[start - 1] != UInt8(ascii: "/") { start -= 1 }
        guard let dot = u[start..<end].lastIndex(of: UInt8(ascii: ".")), dot != start else { return "" }
        return String(decoding: u[(dot + 1)..<end], as: UTF8.self)
    }
}

/// Whether a key parses as a URL the way `NSURL URLWithString:` does
/// (RFC 3986 characters only), and the path it then has.
enum URLKey {
    /// Characters NSURL accepts unescaped in a URL string.
    private static let allowed: [Bool] = {
        var t = [Bool](repeating: false, count: 128)
        for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%".utf8 {
            t[Int(c)] = true
        }
        return t
    }()

    static func percentDecodedPath(of key: String) -> String? {
        let bytes = Array(key.utf8)
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            guard c < 128, allowed[Int(c)] else { return nil }
            if c == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, hexValue(bytes[i + 1]) != nil, hexValue(bytes[i + 2]) != nil else { return nil }
                i += 3
                continue
            }
            i += 1
        }
        // Strip fragment, then query.
        var end = bytes.count
        if let hash = bytes.firstIndex(of: UInt8(ascii: "#")) { end = hash }
        if let q = bytes[..<end].firstIndex(of: UInt8(ascii: "?")) { end = q }
        var start = 0
        // scheme ":" ...
        if let colon = bytes[..<end].firstIndex(of: UInt8(ascii: ":")),
           colon > 0, isScheme(bytes[0..<colon]) {
            start = colon + 1
            if end - start >= 2, bytes[start] == UInt8(ascii: "/"), bytes[start + 1] == UInt8(ascii: "/") {
                // authority runs to the next "/"
                start += 2
                while start < end && bytes[start] != UInt8(ascii: "/") { start += 1 }
            }
        } else if end >= 2, bytes[0] == UInt8(ascii: "/"), bytes[1] == UInt8(ascii: "/") {
            start = 2
            while start < end && bytes[start] != UInt8(ascii: "/") { start += 1 }
        }
        return percentDecode(bytes[start..<end])
    }

    private static func isScheme(_ s: ArraySlice<UInt8>) -> Bool {
        guard let first = s.first, (first | 0x20) >= 0x61 && (first | 0x20) <= 0x7A else { return false }
        return s.allSatisfy { c in
            let l = c | 0x20
            return (l >= 0x61 && l <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2B || c == 0x2D || c == 0x2E
        }
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    static func percentDecode(_ s: ArraySlice<UInt8>) -> String? {
        var out = [UInt8]()
        out.reserveCapacity(s.count)
        var i = s.startIndex
        while i < s.endIndex {
            if s[i] == UInt8(ascii: "%"), i + 2 < s.endIndex, let h = hexValue(s[i + 1]), let l = hexValue(s[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(s[i])
                i += 1
            }
        }
        // NSURL.path returns nil for a path that does not decode as UTF-8.
        return String(validating: out, as: UTF8.self)
    }
}
