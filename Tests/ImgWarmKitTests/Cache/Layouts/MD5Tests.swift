import Crypto
import Testing
import TestSupport
@testable import ImgWarmCache

/// `MD5` (the hash a plan names cache files by) gives swift-crypto's
/// `Insecure.MD5` digest on every input: each length across the padding
/// boundaries (55, 56, 63, 64 bytes) and over several blocks, random bytes,
/// and RFC 1321's own test suite (appendix A.5).
@Suite struct MD5Tests {
    static func words(_ digest: Insecure.MD5Digest) -> (UInt64, UInt64) {
        digest.withUnsafeBytes {
            (UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
             UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }

    static func hex(_ w: (UInt64, UInt64)) -> String {
        withUnsafeBytes(of: (w.0.littleEndian, w.1.littleEndian)) { raw in
            raw.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        }
    }

    @Test func rfc1321TestSuite() {
        let suite: [(String, String)] = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
            ("12345678901234567890123456789012345678901234567890123456789012345678901234567890",
             "57edf4a22be3c955ac49da2e2107b67a"),
        ]
        for (text, expected) in suite {
            let got = Array(text.utf8).withUnsafeBufferPointer { MD5.digest($0) }
            #expect(Self.hex(got) == expected, "\(text)")
        }
    }

    @Test func agreesWithSwiftCrypto() {
        var rng = SeededRandom(seed: 0x3D5_0001)
        var inputs: [[UInt8]] = (0...300).map { n in (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        for _ in 0..<2_000 {
            let n = Int.random(in: 0...2_000, using: &rng)
            inputs.append((0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
        for input in inputs {
            let fast = input.withUnsafeBufferPointer { MD5.digest($0) }
            let reference = Self.words(Insecure.MD5.hash(data: input))
            #expect(fast == reference, "length \(input.count)")
        }
    }

    /// The plan's words are the bytes of `CacheFileName.digest(ofKey:)`,
    /// hashed up to an embedded NUL as SDWebImage does.
    @Test func digestWordsAreTheKeysDigest() {
        var rng = SeededRandom(seed: 0x3D5_0002)
        var keys = ["", "https://e.com/a.png", "a\u{0}b", "\u{0}", "https://e.com/\u{0}tail", "ключ", "https://e.com/😀.png",
                    String(repeating: "x", count: 55), String(repeating: "x", count: 56), String(repeating: "y", count: 64)]
        let alphabet = Array("abc/:.?%\u{0}é😀".unicodeScalars)
        for _ in 0..<2_000 {
            let n = Int.random(in: 0...150, using: &rng)
            var s = String.UnicodeScalarView()
            for _ in 0..<n { s.append(alphabet.randomElement(using: &rng)!) }
            keys.append(String(s))
        }
        for key in keys {
            #expect(CacheFileName.digestWords(ofKey: key) == Self.words(CacheFileName.digest(ofKey: key)), "\(key.debugDescription)")
        }
    }
}
