import Crypto
import Foundation
import Testing
import TestSupport
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// Manifest text -> the key an app computes -> the file it reads.
///
/// Keys: an app linked on iOS 17 or later builds `URL(string: text)` and
/// SDWebImage keys by its `absoluteString` (`SDWebImageManager.m`,
/// `cacheKeyForURL:`). Expected keys below are derived from
/// swift-foundation, `Sources/FoundationEssentials/URL/URLParser.swift`:
/// `parse(urlString:encodingInvalidCharacters:)` re-encodes each invalid
/// component whole with `percentEncode(_:component:)` (skipAlreadyEncoded
/// false, so a `%` in such a component becomes `%25`), keeps valid ones as
/// written, and IDNA-encodes a non-ASCII host (`IDNAEncodeHost`); the allowed
/// sets are the `URLComponentAllowedMask` table there (path: pchar + "/",
/// query and fragment: pchar + "/?", pchar = unreserved + sub-delims + ":@").
///
/// Names: `SDDiskCacheFileNameForKey` (SDWebImage 5.21.5, `SDDiskCache.m`)
/// is `<md5(key)>` + `.<[NSURL URLWithString:key].pathExtension>`; the
/// extension is taken by CoreFoundation before iOS 17 (swift-corelibs-
/// foundation `CFURL.c`, `CFURLCopyPathExtension`: only the last path
/// component is percent-decoded, and a failed decoding gives none) and by
/// swift-foundation after (`URL_Swift.swift`/`URL_Impl.swift` `pathExtension`
/// on the whole decoded path). imgwarm writes `<md5>.<ext>` only where both
/// agree, else the bare `<md5>` that both try second. Expected MD5s are
/// computed here from the expected key.
@Suite struct ParsedURLTests {
    static func md5(_ s: String) -> String {
        Insecure.MD5.hash(data: Array(s.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    struct Vector: CustomStringConvertible, Sendable {
        let text: String
        let key: String
        /// nil: the bare MD5 is written.
        let ext: String?
        /// Every extension some app looks up.
        let lookedUp: [String]
        var description: String { text }
    }

    static let vectors: [Vector] = [
        // Non-ASCII in the path: UTF-8, each byte %XX (uppercase hex). Both
        // parsers decode "фото.jpg": ".jpg".
        Vector(text: "https://example.com/фото.jpg", key: "https://example.com/%D1%84%D0%BE%D1%82%D0%BE.jpg",
               ext: "jpg", lookedUp: ["jpg"]),
        // "|" and "^" are not pchar: %7C, %5E.
        Vector(text: "https://example.com/a|b.jpg", key: "https://example.com/a%7Cb.jpg", ext: "jpg", lookedUp: ["jpg"]),
        Vector(text: "https://example.com/x^y.png", key: "https://example.com/x%5Ey.png", ext: "png", lookedUp: ["png"]),
        // "{" "}" are not allowed in a query: only the query is re-encoded.
        // The path is "/photo.png" for both parsers: ".png".
        Vector(text: "https://example.com/photo.png?b={c}.jpg", key: "https://example.com/photo.png?b=%7Bc%7D.jpg",
               ext: "png", lookedUp: ["png"]),
        // IDNA host (RFC 3492 Punycode of "bücher": "bcher-kva").
        Vector(text: "https://bücher.example/a.jpg", key: "https://xn--bcher-kva.example/a.jpg", ext: "jpg", lookedUp: ["jpg"]),
        // A "%" that starts no escape: the path is invalid and re-encoded
        // whole, "%" -> "%25".
        Vector(text: "https://example.com/100%.jpg", key: "https://example.com/100%25.jpg", ext: "jpg", lookedUp: ["jpg"]),
        // ...and so is a valid escape in that same component.
        Vector(text: "https://example.com/%41|b.jpg", key: "https://example.com/%2541%7Cb.jpg", ext: "jpg", lookedUp: ["jpg"]),
        // Valid as written: the key is the text. CF decodes only
        // "photo.jpg" (".jpg"); swift-foundation decodes the whole path,
        // where %FF is not UTF-8 (`_SwiftURL`: no path, no extension;
        // `_URL`: U+FFFD, ".jpg"). They can disagree: bare MD5. (imgwarm
        // wrote "….2" before: it took "1.2" of the query.)
        Vector(text: "https://example.com/%FF/photo.jpg?v=1.2", key: "https://example.com/%FF/photo.jpg?v=1.2",
               ext: nil, lookedUp: ["jpg"]),
        // CF decodes the last component to "photo.png/": a "/" forbids the
        // extension (`__IsInvalidExtensionCharacter`), NSURL has none and
        // SDWebImage takes `key.pathExtension`, "png%2F". swift-foundation
        // decodes "/photo.png/", drops the trailing "/": ".png".
        Vector(text: "https://example.com/photo.png%2F", key: "https://example.com/photo.png%2F",
               ext: nil, lookedUp: ["png", "png%2F"]),
        // CF drops one trailing "/" (`_rangeOfLastPathComponent`): the last
        // component is empty, no extension, and `key.pathExtension` gives
        // "png"; swift-foundation drops all trailing slashes: ".png". An SDK
        // whose NSURL answered "" would append nothing: bare MD5.
        Vector(text: "https://example.com/photo.png//", key: "https://example.com/photo.png//",
               ext: nil, lookedUp: ["png"]),
    ]

    @Test(arguments: vectors)
    func manifestTextGivesTheAppsKeyAndName(_ v: Vector) throws {
        let parsed = try ParsedURL.parse(v.text).get()
        #expect(parsed.absolute == v.key)
        #expect(parsed.reencoded == (v.text != v.key))
        // The library itself (Foundation's URL on this system is
        // swift-foundation) agrees with the derivation.
        #expect(URL(string: v.text)?.absoluteString == v.key)
        let name = CacheFileName(key: parsed.absolute)
        let md5 = Self.md5(v.key)
        #expect(name.md5 == md5)
        #expect(name.storedName == (v.ext.map { md5 + "." + $0 } ?? md5))
        #expect(name.lookupNames == v.lookedUp.map { md5 + "." + $0 } + [md5])
    }

    /// `prune --keep` pins every name an app may read, under the app's key
    /// of each manifest line.
    @Test func pinnedNamesFollowTheAppsKeyAndEveryParser() throws {
        let dir = makeTempDirectory("imgwarm-pins")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let manifest = dir + "/keep.txt"
        FileManager.default.createFile(atPath: manifest, contents: Data(Self.vectors.map(\.text).joined(separator: "\n").utf8))
        var problems: [PinnedNames.Problem] = []
        let pins = try PinnedNames.load(manifests: [manifest]) { problems.append($0) }
        #expect(problems.isEmpty)
        for v in Self.vectors {
            let md5 = Self.md5(v.key)
            for name in v.lookedUp.map({ md5 + "." + $0 }) + [md5] { #expect(pins.contains(name), "\(v.text): \(name)") }
            // Not under the manifest text's own MD5 (what imgwarm used to key by).
            if v.text != v.key { #expect(!pins.contains(Self.md5(v.text))) }
        }
    }

    @Test func theIssuesExampleMD5() {
        // Quoted in the issue from imgwarm's old name "….2".
        #expect(Self.md5("https://example.com/%FF/photo.jpg?v=1.2") == "5778e2a1fe0cd7a9932abaad8bfbc004")
    }

    /// CF's extension rules on one component (`CFUtilities.c`,
    /// `__GetPathExtensionRangesFromPathComponentBuffer`): a space, `/` or
    /// bidi control after the last dot forbids it; a dot at the start or the
    /// end gives none; a space before the dot does not matter.
    @Test(arguments: [
        ("photo.jpg", "jpg"), ("a b.jpg", "jpg"), ("photo.j pg", nil), ("photo.png/", nil), (".hidden", nil),
        ("name.", nil), ("photo.jp\u{202E}g", nil), ("photo.jp\u{200E}", nil), ("a.tar.gz", "gz"), ("noext", nil),
    ] as [(String, String?)])
    func coreFoundationExtensionRules(component: String, expected: String?) {
        #expect(CacheFileName.cfComponentExtension(component) == expected)
    }

    /// The plain-URL shortcut gives exactly what every parser's full
    /// reading gives, and takes only keys where all of them agree.
    @Test(arguments: [
        "http://example.com/a/photo.jpg", "https://cdn.example.com:8443/x/y/z.png", "http://h/a.b.c.webp",
        "https://h/x~y_z-1.JPEG", "http://h:/a.gif", "http://127.0.0.1:18471/thumbs/000/t000000.png",
        "http://h/dir.d/file.avif", "http://h/a-.-b", "http://h/x._",
    ])
    func plainURLShortcutMatchesTheFullReading(key: String) throws {
        let ext = try #require(CacheFileName.plainURLExtension(key))
        let full = CacheFileName.readExtensions(key)
        #expect(full.sdExtension == ext)
        #expect(full.extensions == [ext])
        #expect(full.agreed)
    }

    /// On generated keys near the plain shape (each byte class, both
    /// schemes, ports, dots and slashes anywhere), the shortcut takes only
    /// keys where every parser's full reading gives its extension.
    @Test func plainURLShortcutAgreesOnGeneratedKeys() {
        var rng = SeededRandom(seed: 0xE87_0001)
        let pieces = ["a", "Z", "0", "-", "_", "~", ".", "/", "..", "%41", "?", "#", ":", "@", " ", "ä", "png", "jpg"]
        var taken = 0
        for k in 0..<12_000 {
            var key = ["http://", "https://", "HTTP://", "http:/", "https:"][k % 5 == 4 ? Int.random(in: 2...4, using: &rng) : k % 2]
            key += ["h", "cdn.example.com", "127.0.0.1", "a-b", "h_x", ""][Int.random(in: 0...5, using: &rng)]
            key += ["", ":8080", ":", ":x"][Int.random(in: 0...3, using: &rng)]
            key += "/"
            for _ in 0..<Int.random(in: 0...8, using: &rng) { key += pieces[Int.random(in: 0...(k % 3 == 0 ? 17 : 8), using: &rng)] }
            guard let ext = CacheFileName.plainURLExtension(key) else { continue }
            taken += 1
            let full = CacheFileName.readExtensions(key)
            #expect(full.sdExtension == ext, "\(key)")
            #expect(full.extensions == [ext], "\(key)")
            #expect(full.agreed, "\(key)")
        }
        #expect(taken > 300)
    }

    /// The shortcut's sets of bits are the byte classes they stand for.
    @Test func plainURLByteSets() {
        for c in UInt8.min...UInt8.max {
            let alnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
            #expect(CacheFileName.isPlainHostChar(c) == (alnum || c == UInt8(ascii: ".") || c == UInt8(ascii: "-")), "\(c)")
            #expect(CacheFileName.isPlainPathChar(c)
                    == (alnum || c == UInt8(ascii: "-") || c == UInt8(ascii: "_") || c == UInt8(ascii: "~")), "\(c)")
        }
    }

    /// `join` gives `md5 + "." + ext` for any extension (ASCII, non-ASCII,
    /// short and long strings).
    @Test func joinIsConcatenation() {
        let md5 = Self.md5("https://e/a.png")
        for ext in ["png", "j", "ä", "😀x", String(repeating: "e", count: 40), "webp"] {
            #expect(CacheFileName.join(md5, ext) == md5 + "." + ext)
        }
    }

    /// `names` builds each name once and gives what `storedName` and
    /// `lookupNames` give, whether the parsers agree or not.
    @Test(arguments: ["https://e/a/photo.jpg", "https://e/a/photo.j pg", "https://e/a%20b.png", "https://e/..png",
                      "https://e/x.tar.gz?x=1", "https://e/noext", "https://e/a.png/", "https://e/ä.webp", "key.with space"])
    func namesMatchStoredAndLookupNames(key: String) {
        let name = CacheFileName(key: key)
        #expect(name.names.stored == name.storedName)
        #expect(name.names.lookup == name.lookupNames)
    }

    /// Keys outside the plain shape go to the full reading (some of them
    /// because the parsers disagree or give none).
    @Test(arguments: [
        "http://h/..png", "http://h/.hidden", "http://h/name.", "http://h/dir/", "http://h/noext", "http://h/a.png/",
        "http://h/a.png?x=1", "http://h/a.png#f", "http://h/a%20b.png", "http://u@h/a.png", "HTTP://h/a.png",
        "ftp://h/a.png", "http:///a.png", "http://h", "http://h:x/a.png", "http://h/a b.png", "http://h/a;p.png",
        "http://h/ä.png", "http://[::1]/a.png", "http://h/a:b.png", "photo.png", "",
    ])
    func otherKeysTakeTheFullReading(key: String) {
        #expect(CacheFileName.plainURLExtension(key) == nil)
    }

    /// The byte-level reading of an ASCII component (the fast path of
    /// `cfComponentExtension`) gives what the rule on UTF-16 units gives.
    @Test(arguments: ["photo.jpg", "a b.jpg", "photo.j pg", "photo.png/", ".hidden", "name.", "a.tar.gz", "noext",
                      "", ".", "..", "a..b", "a/b.c", "x.y z", "x.y/z", "q.PNG"])
    func asciiExtensionRuleMatchesUTF16Rule(component: String) {
        var bytes = component
        guard case .ascii(let ext) = bytes.withUTF8(CacheFileName.asciiComponentExtension) else {
            Issue.record("an ASCII component was not read as ASCII")
            return
        }
        #expect(ext == CacheFileName.utf16ComponentExtension(Array(component.utf16)))
    }

    /// A component with any non-ASCII byte is left to the UTF-16 rule.
    @Test func nonASCIIComponentTakesTheUTF16Rule() {
        var bytes = "photo.jp\u{202E}g"
        guard case .notASCII = bytes.withUTF8(CacheFileName.asciiComponentExtension) else {
            Issue.record("a non-ASCII component was read as ASCII")
            return
        }
    }

    /// A bidi control in the decoded last component: CF and swift-foundation
    /// both refuse the extension, NSString's fallback as corelibs spells it
    /// keeps the percent-encoded text: never a `.jpg` name.
    @Test func bidiControlsEndTheExtension() {
        let name = CacheFileName(key: "https://example.com/photo.jp%E2%80%AEg")
        #expect(name.sdExtension == nil)
        #expect(name.storedName == name.md5)
    }

    @Test func keysOfOtherLines() throws {
        // Unchanged: valid text is the key as written (uppercase kept).
        #expect(try ParsedURL.parse("HTTPS://EXAMPLE.COM/A.JPG").get().absolute == "HTTPS://EXAMPLE.COM/A.JPG")
        #expect(try ParsedURL.parse("https://example.com/a.jpg?x=1#f").get().reencoded == false)
        // A second "#" is not allowed in a fragment: %23.
        #expect(try ParsedURL.parse("https://example.com/a#b#c").get().absolute == "https://example.com/a#b%23c")
        // Space (a JSON line can hold one) -> %20.
        #expect(try ParsedURL.parse("https://example.com/a b.jpg").get().absolute == "https://example.com/a%20b.jpg")
    }

    @Test func urlsNoAppCouldLoadAreInvalidWithAReason() {
        func reason(_ text: String) -> String? {
            if case .failure(let p) = ParsedURL.parse(text) { return p.reason }
            return nil
        }
        #expect(reason("https://ex ample.com/a.jpg")?.hasPrefix("not a valid URL, even percent-encoded") == true)
        #expect(reason("https://example.com:99999/a.jpg")?.hasPrefix("libcurl cannot fetch it: ") == true)
        #expect(reason("https:///a.jpg") == "URL has no host")
        #expect(reason("https://") == "URL has no host")
        #expect(reason("ftp://e.com/a.jpg")?.hasPrefix("unsupported scheme 'ftp'") == true)
        #expect(reason("FTP://e.com/a.jpg")?.hasPrefix("unsupported scheme 'ftp'") == true)
        for scheme in ["htt", "httpx", "httpss", "hxxp", "HTTQ", "https+x"] {
            #expect(reason("\(scheme)://e.com/a.jpg")?.hasPrefix("unsupported scheme '\(scheme.lowercased())'") == true, "\(scheme)")
        }
        for scheme in ["http", "HTTP", "https", "HttPS"] {
            #expect(reason("\(scheme)://e.com/a.jpg") == nil, "\(scheme)")
        }
        // Written without a scheme: said so, with an example.
        for text in ["e.com/a.jpg", "localhost:8080/a.jpg", "cdn.example.com:443/a.jpg", "//e.com/a.jpg", "/img/a.jpg", "a.jpg"] {
            #expect(reason(text)?.hasPrefix("no scheme (a manifest line starts with the whole URL, e.g. https://") == true, "\(text)")
        }
        #expect(reason("javascript:alert(1)")?.hasPrefix("unsupported scheme 'javascript'") == true)
        #expect(reason("localhost:a.jpg")?.hasPrefix("unsupported scheme 'localhost'") == true)
        #expect(reason("https://e.com/\u{1B}[2J.png") == "URL contains a control character")
        // Wherever it stands, before any other reason.
        for text in ["htt\u{1}p://e.com/a.png", "https://e\u{1F}.com/a.png", "https://e.com:8\u{7F}0/a.png",
                     "https://u\u{9}@e.com/a.png", "https://e.com/a.png?q=\u{0}", "https://e.com/a.png#\u{7F}",
                     "e.com/\u{1}a.png", "ftp://e.com/\u{1B}", "https://e.com/a b\u{2}.png", "\u{1}"] {
            #expect(reason(text) == "URL contains a control character", "\(text.debugDescription)")
        }
    }

    @Test func credentialsAreMaskedAndKeptForTheTransfer() throws {
        let p = try ParsedURL.parse("https://alice:s3cret@Example.com:8443/a|b.jpg").get()
        #expect(p.absolute == "https://alice:s3cret@Example.com:8443/a%7Cb.jpg")
        #expect(p.hasCredentials)
        #expect(p.redacted == "https://***@Example.com:8443/a%7Cb.jpg")
        #expect(p.hostKey == "https://example.com:8443")
        let plain = try ParsedURL.parse("http://e.com/a@b.jpg").get()
        #expect(!plain.hasCredentials && plain.redacted == plain.absolute)
    }
}
