import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The one hex helper every digest name, temp name, UUID and escape uses.
@Suite struct HexTests {
    @Test func bytesEncodeTwoDigitsEachInOrder() {
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(Hex.encode([0x00, 0x0f, 0xa0, 0xff], uppercase: true) == "000FA0FF")
        #expect(Hex.encode(Array(0...255).map(UInt8.init)).count == 512)
    }

    @Test func numbersArePaddedToTheirWidth() {
        #expect(Hex.padded(UInt32(0), digits: 8) == "00000000")
        #expect(Hex.padded(UInt32(0xdead), digits: 8) == "0000dead")
        #expect(Hex.padded(UInt64.max, digits: 16) == "ffffffffffffffff")
        #expect(Hex.padded(UInt32(0x1b), digits: 2, uppercase: true) == "1B")
        // Wider than asked: kept whole.
        #expect(Hex.padded(UInt32(0x12345), digits: 4) == "12345")
    }

    @Test func digitsDecodeInEitherCase() {
        for (c, v) in [("0", 0), ("9", 9), ("a", 10), ("f", 15), ("A", 10), ("F", 15)] as [(Character, UInt8)] {
            #expect(Hex.value(c.asciiValue!) == v)
        }
        for c in ["g", "G", "/", ":", "@", "`", " "] as [Character] { #expect(Hex.value(c.asciiValue!) == nil) }
        for b in UInt8.min...UInt8.max {
            #expect((Hex.value(b) != nil) == "0123456789abcdefABCDEF".utf8.contains(b))
        }
    }
}
