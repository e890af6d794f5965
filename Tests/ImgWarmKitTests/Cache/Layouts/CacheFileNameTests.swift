import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// SDWebImage's `SDDiskCacheFileNameForKey`, rule by rule.
@Suite struct CacheFileNameTests {
    @Test(arguments: [
        // The examples of docs/cache-formats.md, SDWebImage section.
        ("https://example.com/images/photo.jpg", "b46ca04023feeac3addabe8e574e2211.jpg"),
        ("https://example.com/images/photo.png?size=large&v=2", "04eb028ad94f7f979d0b79784d86e8e6.png"),
        ("https://example.com/avatar/12345", "aef7184dae84372263ed9aa2e8a91439"),
        ("https://example.com/images/PHOTO.JPG", "9d8e97da97cd4d36364aad594e287706.JPG"),
        // Fragment excluded from the path.
        ("https://example.com/a/b.png#frag", "75c1f02179691dc08e41929d21ffc060.png"),
        // A query that looks like an extension does not count.
        ("https://example.com/photo.jpg?x=1.gif", "9e76f726345fc41f580694c032c92338.jpg"),
        // Hidden-style last component and trailing dot: no extension.
        ("https://example.com/.hidden", "3f087077b708186b5d5e5b64482954dc"),
        ("https://example.com/file.", "d081c5ce1318109909b40b9010b090df"),
        // Trailing slash ignored.
        ("https://example.com/dir.d/", "125a74c8246b0e59bd93fc160783b5d1.d"),
        // Only the last dot counts.
        ("https://example.com/a.tar.gz", "f345f13a90aaabf5e50602c32e0520aa.gz"),
        // No path at all.
        ("https://example.com/", "182ccedb33a9e03fbf1079b209da1a31"),
        // Percent-encoding decoded before taking the extension.
        ("https://example.com/x/caf%C3%A9.jp%67", "a08578a97920151ab295e6f1f605e8f1.jpg"),
        ("https://example.com/%E5%9B%BE.png", "e34dc06562b23eb0b044fd784efd2681.png"),
        // Non-URL keys use the string's own extension.
        ("my key.png", "5591421b15ed7dcf7a7953a9c89f635d.png"),
        ("image-key-without-url.webp", "fac201bb1c3f93a36993bec43654d2c7.webp"),
    ])
    func sdWebImageName(key: String, expected: String) {
        #expect(CacheFileName(key: key).sdName == expected)
    }

    @Test func extensionOver222CharactersIsDropped() {
        let at222 = "https://example.com/a." + String(repeating: "x", count: 222)
        let at223 = "https://example.com/a." + String(repeating: "x", count: 223)
        #expect(CacheFileName(key: at222).sdName == "5d2a6dbe5ec33039fe13e38bcd2d11c6." + String(repeating: "x", count: 222))
        #expect(CacheFileName(key: at223).sdName == "571333d059d7a87a40cd086cec552e8b")
    }

    @Test func colonAndNulRemovedFromExtension() {
        #expect(CacheFileName.sanitized("b:c") == "bc")
        // Not a URL before iOS 17 (space), so the string's own extension
        // "jp:g" is used; an iOS 17+ app gets the same from the encoded URL.
        let name = CacheFileName(key: "my photo.jp:g")
        #expect(name.sdExtension == "jpg")
        // SDWebImage hashes key.UTF8String with strlen(): up to the NUL.
        let withNul = CacheFileName(key: "my photo.j\u{0}pg")
        #expect(withNul.sdExtension == "jpg")
        #expect(withNul.md5 == "3a68164e2d093622d612030453d88845")
        // "file.jp:g": scheme "file.jp", path "g" under RFC 3986 (no
        // extension); CFURL finds no path at all (`CFURL.inc.h`: a scheme
        // must be followed by "/"), so NSURL.pathExtension is nil and
        // SDWebImage takes `key.pathExtension`, "jp:g" -> "jpg".
        let odd = CacheFileName(key: "file.jp:g")
        #expect(odd.sdExtension == nil)
        #expect(odd.extensions == ["jpg"])
        #expect(odd.storedName == odd.md5)
    }

    @Test func oddExtensionsAreStoredUnderTheBareMD5() {
        // "a.b%20c": the decoded last component "a.b c" has a space after
        // the dot, which ends the extension for CoreFoundation
        // (`CFUtilities.c`, `__IsInvalidExtensionCharacter`) and for
        // swift-foundation (`Span+Path.swift`, `pathExtensionDotIndex`).
        // CF's NSURL then has none and SDWebImage falls back to
        // `key.pathExtension`, "b%20c"; an iOS 17+ app appends nothing.
        let name = CacheFileName(key: "https://example.com/a.b%20c")
        #expect(name.sdName == "8c0298e31fcaf8568f4d7324b8608259")
        #expect(name.storedName == "8c0298e31fcaf8568f4d7324b8608259")
        #expect(name.lookupNames == ["8c0298e31fcaf8568f4d7324b8608259.b%20c", "8c0298e31fcaf8568f4d7324b8608259"])
        let nonASCII = CacheFileName(key: "https://example.com/photo.jpég")
        #expect(nonASCII.storedName == nonASCII.md5)
        // Ordinary extensions keep their case and are written as such.
        #expect(CacheFileName(key: "https://example.com/images/PHOTO.JPG").storedName.hasSuffix(".JPG"))
    }

    @Test func md5IsLowercaseHexOfUTF8() {
        let name = CacheFileName(key: "https://example.com/ü.png")
        #expect(name.md5.count == 32)
        #expect(name.md5.allSatisfy { "0123456789abcdef".contains($0) })
    }

    @Test func nonURLKeysWithQueryCharactersKeepThemInTheExtension() {
        // Not a URL before iOS 17 (space): NSString.pathExtension keeps
        // "png?x=1". An iOS 17+ app encodes the space and has the query
        // "x=1" apart: "png". Both are looked up; the bare MD5 is written.
        let name = CacheFileName(key: "a b.png?x=1")
        #expect(name.sdExtension == "png")
        #expect(name.extensions == ["png", "png?x=1"])
        #expect(name.storedName == name.md5)
    }
}
