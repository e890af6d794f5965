import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The one marker walk of the header reader and the memory estimate skips
/// what libjpeg skips before a marker (libjpeg-turbo, src/jdmarker.c,
/// next_marker: bytes other than 0xFF, runs of 0xFF fill, a stuffed 0xFF
/// 0x00) and finds the same frame header either way.
@Suite struct JPEGMarkersTests {
    /// SOI, an APP0 of 2 payload bytes, `gap`, an SOF2 of 640x480 with
    /// three 1x1 components, then SOS of 3 components.
    static func jpeg(gap: [UInt8]) -> [UInt8] {
        let app0: [UInt8] = [0xFF, 0xE0, 0x00, 0x04, 0x4A, 0x46]
        let sof: [UInt8] = [0xFF, 0xC2, 0x00, 0x11, 0x08, 0x01, 0xE0, 0x02, 0x80, 0x03,
                            0x01, 0x11, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]
        let sos: [UInt8] = [0xFF, 0xDA, 0x00, 0x0C, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3F, 0x00]
        return [0xFF, 0xD8] + gap + app0 + gap + sof + sos + [0x00, 0xFF, 0xD9]
    }

    static let gaps: [(String, [UInt8])] = [
        ("none", []),
        ("one stray byte", [0x00]),
        ("stray bytes", [0x12, 0x34, 0x56]),
        ("fill bytes", [0xFF, 0xFF]),
        ("a stuffed zero", [0xFF, 0x00]),
        ("stray bytes then a stuffed zero", [0x01, 0xFF, 0x00, 0x7F]),
    ]

    @Test(arguments: gaps) func theFrameHeaderIsFoundPastWhatLibjpegSkips(_ c: (String, [UInt8])) {
        let bytes = Self.jpeg(gap: c.1)
        bytes.withUnsafeBytes { b in
            #expect(ImageHeader.jpeg(b) == ImageInfo(format: .jpeg, width: 640, height: 480, frames: 1), "\(c.0)")
            let frame = DecodeMemory.jpegFrame(b)
            #expect(frame?.width == 640 && frame?.height == 480 && frame?.progressive == true, "\(c.0)")
            #expect(frame?.firstScanComponents == 3, "\(c.0)")
            // 3 components x 80 x 60 blocks x 128 bytes, plus rows.
            #expect(DecodeMemory.jpeg(b) == 3 * 80 * 60 * 128 + 640 * 3 * 8, "\(c.0)")
        }
    }

    /// No frame header before the scan: none is coming.
    @Test func aScanBeforeAnyFrameHeaderGivesNoSize() {
        let bytes: [UInt8] = [0xFF, 0xD8, 0x00, 0xFF, 0xDA, 0x00, 0x02, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x10, 0x00, 0x10, 0x01, 0x01, 0x11, 0x00]
        bytes.withUnsafeBytes { b in
            #expect(ImageHeader.jpeg(b).width == nil)
            #expect(DecodeMemory.jpegFrame(b) == nil)
        }
    }
}
