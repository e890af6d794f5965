import CImageFixtures
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The helpers of every decode test file.
func validate(_ bytes: [UInt8], _ options: ValidationOptions = ValidationOptions()) -> Result<ImageInfo, ValidationFailure> {
    ImageValidator.validate(bytes, options: options)
}

func reason(_ result: Result<ImageInfo, ValidationFailure>) -> String? {
    if case .failure(let f) = result { return f.reason }
    return nil
}

func info(_ result: Result<ImageInfo, ValidationFailure>) -> ImageInfo? {
    if case .success(let i) = result { return i }
    return nil
}

// MARK: valid images pass with their size and frame count

struct PNGVariant: CustomTestStringConvertible, Sendable {
    var name: String
    var color: Fixture.PNGColor
    var depth: Int32
    var interlaced = false
    var trns = false
    var testDescription: String { name }
}

@Suite struct DecodeValidImages {
    static let pngVariants: [PNGVariant] = [
        PNGVariant(name: "RGB 8-bit", color: .rgb, depth: 8),
        PNGVariant(name: "RGBA 8-bit", color: .rgba, depth: 8),
        PNGVariant(name: "RGB 16-bit", color: .rgb, depth: 16),
        PNGVariant(name: "RGBA 16-bit", color: .rgba, depth: 16),
        PNGVariant(name: "gray 8-bit", color: .gray, depth: 8),
        PNGVariant(name: "gray 16-bit", color: .gray, depth: 16),
        PNGVariant(name: "gray 1-bit", color: .gray, depth: 1),
        PNGVariant(name: "gray+alpha", color: .grayAlpha, depth: 8),
        PNGVariant(name: "palette 8-bit tRNS", color: .palette, depth: 8, trns: true),
        PNGVariant(name: "palette 4-bit tRNS", color: .palette, depth: 4, trns: true),
        PNGVariant(name: "RGB tRNS colour key", color: .rgb, depth: 8, trns: true),
        PNGVariant(name: "interlaced RGBA", color: .rgba, depth: 8, interlaced: true),
        PNGVariant(name: "interlaced palette", color: .palette, depth: 8, interlaced: true, trns: true),
        PNGVariant(name: "interlaced gray 16-bit", color: .gray, depth: 16, interlaced: true),
    ]

    @Test(arguments: pngVariants)
    func png(_ v: PNGVariant) {
        // 37x23: odd sides leave partial Adam7 blocks and partial bytes.
        let bytes = Fixture.png(37, 23, v.color, depth: v.depth, interlaced: v.interlaced, trns: v.trns)
        #expect(validate(bytes) == .success(ImageInfo(format: .png, width: 37, height: 23, frames: 1)))
    }

    @Test func apngReportsItsFrames() {
        let bytes = Fixture.apng(20, 10, frames: 3)
        #expect(Fixture.chunks(bytes).map(\.type) == ["IHDR", "acTL", "fcTL", "IDAT", "fcTL", "fdAT", "fcTL", "fdAT", "IEND"])
        #expect(validate(bytes) == .success(ImageInfo(format: .png, width: 20, height: 10, frames: 3)))
    }

    /// A text chunk that claims 1.7 GB in a small file is a cut file, found
    /// before libpng allocates the claimed length. The allocation itself is
    /// checked by the image fuzzer (ASan, 2 GB RSS limit) on the seed
    /// fuzz/corpus/image/png-text-chunk-claims-1.7GB, the file it found.
    @Test func pngChunkClaimingMoreThanTheFileIsTruncated() {
        let png = Fixture.png(3, 2)
        let idat = Fixture.chunks(png).first { $0.type == "IDAT" }!.offset
        let bytes = Array(png[..<idat]) + [0x6A, 0x65, 0x63, 0x74] + Array("tEXt".utf8) + Array("date:create".utf8)
        #expect(reason(validate(bytes)) == "truncated PNG: premature end of data in the header")
    }

    /// fcTL and fdAT chunks before acTL count in an APNG (libpng's APNG
    /// patch reads an fcTL wherever it comes before IDAT, checking its
    /// sequence number: DecodeAPNG.fcTLBeforeAcTLIsAnimated), so both are
    /// checked like the others: a 3-byte fdAT there is refused by its
    /// length and never fed to zlib with a wrapped length (a read past the
    /// buffer before), and an fcTL out of sequence fails.
    @Test func apngChunksBeforeACTLAreChecked() {
        // sequence 9, 1x1 at (0, 0), delay 1/10, no dispose, no blend
        let fctl: [UInt8] = [0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 10, 0, 0]
        var bytes = Fixture.apng(20, 10, frames: 3)
        bytes = Fixture.insertingChunk(bytes, "fcTL", fctl, before: "acTL")
        bytes = Fixture.insertingChunk(bytes, "fcTL", fctl, before: "acTL")
        bytes = Fixture.insertingChunk(bytes, "fdAT", [0x78, 0x01, 0x01], before: "acTL")
        #expect(Fixture.chunks(bytes).map(\.type).prefix(5) == ["IHDR", "fcTL", "fcTL", "fdAT", "acTL"])
        #expect(reason(validate(bytes)) == "corrupt PNG: fcTL: sequence number 9 where 0 was due")
        let shortFdAT = Fixture.insertingChunk(Fixture.apng(20, 10, frames: 3), "fdAT", [0x78, 0x01, 0x01], before: "acTL")
        #expect(reason(validate(shortFdAT)) == "corrupt PNG: fdAT: length 3")
    }

    @Test(arguments: [
        (IWF_JPEG_BASELINE, false), (IWF_JPEG_PROGRESSIVE, false), (IWF_JPEG_GRAY, false),
        (IWF_JPEG_CMYK, false), (IWF_JPEG_YCCK, false), (IWF_JPEG_BASELINE, true), (IWF_JPEG_PROGRESSIVE, true),
    ])
    func jpeg(_ kind: iwf_jpeg_kind, _ markers: Bool) {
        // 67x45: not a multiple of the 16x16 MCU, so edge blocks are padded.
        let bytes = Fixture.jpeg(67, 45, kind, markers: markers)
        if markers {
            #expect(bytes.starts(with: [0xFF, 0xD8]) && contains(bytes, Array("Exif\0\0".utf8)) && contains(bytes, Array("ICC_PROFILE\0".utf8)))
        }
        #expect(validate(bytes) == .success(ImageInfo(format: .jpeg, width: 67, height: 45, frames: 1)))
    }

    @Test func stillGIF() {
        #expect(validate(Fixture.gif(40, 30)) == .success(ImageInfo(format: .gif, width: 40, height: 30, frames: 1)))
    }

    @Test func animatedGIFWithLoopExtension() {
        let bytes = Fixture.gif(40, 30, frames: 4)
        #expect(contains(bytes, Array("NETSCAPE2.0".utf8)))
        #expect(validate(bytes) == .success(ImageInfo(format: .gif, width: 40, height: 30, frames: 4)))
    }

    @Test func headerOnlyWhenDecodingIsOff() {
        var options = ValidationOptions()
        options.decode = false
        // Truncated data passes: --no-validate only sniffs and reads headers.
        let png = Fixture.png(50, 40)
        #expect(validate(Array(png.prefix(60)), options) == .success(ImageInfo(format: .png, width: 50, height: 40)))
        #expect(validate(Fixture.jpeg(67, 45, IWF_JPEG_PROGRESSIVE, markers: true), options)
            == .success(ImageInfo(format: .jpeg, width: 67, height: 45, frames: 1)))
        #expect(validate(Fixture.gif(40, 30, frames: 2), options) == .success(ImageInfo(format: .gif, width: 40, height: 30)))
        // The pixel limit still applies to what the header says.
        #expect(reason(validate(Fixture.withIHDRSize(png, width: 60000, height: 60000), options))
            == "PNG 60000x60000 exceeds the pixel limit of 100000000")
        #expect(reason(validate(Array("<html></html>".utf8), options)) == "not an image (looks like HTML)")
    }
}

// MARK: truncated and corrupt data fail, saying why

@Suite struct DecodeBrokenImages {
    @Test func truncatedPNG() {
        let png = Fixture.png(64, 48, .rgba)
        let idat = Fixture.chunks(png).first { $0.type == "IDAT" }!
        #expect(reason(validate(Array(png.prefix(20)))) == "truncated PNG: premature end of data in the header")
        #expect(reason(validate(Array(png.prefix(idat.dataStart + idat.length / 2))))?
            .hasPrefix("truncated PNG: premature end of data at row ") == true)
        // Every row present, IEND cut: only png_read_end sees it.
        #expect(reason(validate(Array(png.dropLast(1)))) == "truncated PNG: premature end of data after the last row (no IEND)")
        #expect(reason(validate(Array(png.dropLast(12)))) == "truncated PNG: premature end of data after the last row (no IEND)")
    }

    @Test func truncatedInterlacedPNGNamesThePass() {
        let png = Fixture.png(64, 48, .rgb, interlaced: true)
        let r = reason(validate(Array(png.prefix(png.count / 2))))
        #expect(r?.hasPrefix("truncated PNG: premature end of data in interlace pass ") == true, "\(r ?? "passed")")
    }

    @Test(arguments: [IWF_JPEG_BASELINE, IWF_JPEG_PROGRESSIVE])
    func truncatedJPEG(_ kind: iwf_jpeg_kind) {
        let jpeg = Fixture.jpeg(64, 48, kind)
        for cut in [20, Fixture.jpegScanStart(jpeg) + 10, jpeg.count / 2, jpeg.count - 2, jpeg.count - 1] {
            #expect(reason(validate(Array(jpeg.prefix(cut)))) == "truncated JPEG: premature end of data", "cut at \(cut) of \(jpeg.count)")
        }
    }

    @Test func truncatedGIF() {
        let gif = Fixture.gif(40, 30, frames: 3)
        #expect(reason(validate(Array(gif.prefix(8)))) == "truncated GIF: premature end of data in the header")
        #expect(reason(validate(Array(gif.prefix(gif.count / 2))))?.hasPrefix("truncated GIF: premature end of data in frame ") == true)
        // Only the trailer byte (0x3B) is missing.
        #expect(reason(validate(Array(gif.dropLast(1)))) == "truncated GIF: premature end of data after frame 3")
    }

    @Test func pngWithBadIDATCRC() {
        let png = Fixture.png(32, 32)
        let idat = Fixture.chunks(png).first { $0.type == "IDAT" }!
        var badCRC = png
        badCRC[idat.dataStart + idat.length] ^= 0x01
        #expect(reason(validate(badCRC)) == "corrupt PNG: IDAT: CRC error")
        // A flipped data bit: zlib trips over it before the chunk's CRC is
        // checked at the chunk's end, either way the image fails.
        var badData = png
        badData[idat.dataStart + idat.length / 2] ^= 0x01
        #expect(reason(validate(badData))?.hasPrefix("corrupt PNG: IDAT: ") == true)
    }

    @Test func jpegWithCorruptEntropyData() {
        // A run of 1 bits is never a valid Huffman code (JPEG forbids the
        // all-ones code word), so this damage is always detectable.
        var jpeg = Fixture.jpeg(64, 48)
        let middle = Fixture.jpegScanStart(jpeg) + (jpeg.count - Fixture.jpegScanStart(jpeg)) / 2
        for k in stride(from: 0, to: 16, by: 2) {
            jpeg[middle + k] = 0xFF
            jpeg[middle + k + 1] = 0x00  // stuffed 0xFF: sixteen 1 bits per pair
        }
        let r = reason(validate(jpeg))
        #expect(r == "corrupt JPEG: bad Huffman code", "\(r ?? "passed")")
    }

    @Test func ancillaryDamageIsTolerated() {
        // libpng drops an ancillary chunk with a bad CRC and shows the
        // image, as browsers and ImageIO do: not a broken image.
        let png = Fixture.insertingChunk(Fixture.png(16, 16), "tEXt", Array("Comment\0hello".utf8), before: "IDAT", badCRC: true)
        #expect(validate(png) == .success(ImageInfo(format: .png, width: 16, height: 16, frames: 1)))
        // A damaged critical chunk is fatal.
        let badPLTE = Fixture.insertingChunk(Fixture.png(16, 16), "PLTE", [1, 2, 3], before: "IDAT", badCRC: true)
        #expect(reason(validate(badPLTE)) == "corrupt PNG: PLTE: CRC error")
    }

    @Test func jpegStrayBytesBeforeEOI() {
        // A few stray bytes after the scan (encoder padding, common in the
        // wild) are tolerated; hundreds mean the entropy data is off.
        let jpeg = Fixture.jpeg(32, 32)
        let few = Array(jpeg.dropLast(2)) + [0x12, 0x34, 0x56] + [0xFF, 0xD9]
        #expect(validate(few) == .success(ImageInfo(format: .jpeg, width: 32, height: 32, frames: 1)))
        let many = Array(jpeg.dropLast(2)) + [UInt8](repeating: 0x42, count: 300) + [0xFF, 0xD9]
        let r = reason(validate(many))
        #expect(r?.hasPrefix("corrupt JPEG: ") == true && r?.hasSuffix("extraneous bytes before marker 0xd9") == true, "\(r ?? "passed")")
    }

    @Test func pngSideBeyondLibpngLimit() {
        let png = Fixture.withIHDRSize(Fixture.png(8, 8), width: 2_000_000, height: 1)
        #expect(reason(validate(png)) == "corrupt PNG: IHDR gives 2000000x1, a side longer than 1000000 pixels")
    }

    @Test func hugePNGIsRefusedFromItsHeader() {
        // Real IDAT of a 32x32 image behind a header claiming 60000x60000:
        // decoding would fail on the data; refusal must come first.
        let png = Fixture.withIHDRSize(Fixture.png(32, 32), width: 60000, height: 60000)
        #expect(reason(validate(png)) == "PNG 60000x60000 exceeds the pixel limit of 100000000")
    }

    @Test func pixelLimitAppliesToEveryDecodedFormat() {
        var options = ValidationOptions()
        options.maxPixels = 1000
        #expect(reason(validate(Fixture.png(40, 30), options)) == "PNG 40x30 exceeds the pixel limit of 1000")
        #expect(reason(validate(Fixture.jpeg(40, 30), options)) == "JPEG 40x30 exceeds the pixel limit of 1000")
        #expect(reason(validate(Fixture.gif(40, 30), options)) == "GIF 40x30 exceeds the pixel limit of 1000")
        #expect(reason(validate(Handmade.webpLossless(40, 30), options)) == "WebP 40x30 exceeds the pixel limit of 1000")
        options.maxPixels = 1200
        #expect(info(validate(Fixture.png(40, 30), options))?.width == 40)
    }

    @Test func gifFramesHaveAPixelBudget() {
        // 20x20 first frame, then 10x10 frames: 400 + 100 * 97 > 10 * 1000.
        let gif = Fixture.gif(20, 20, frames: 100)
        var options = ValidationOptions()
        options.maxPixels = 1000
        #expect(reason(validate(gif, options)) == "GIF frames add up to more than 10 times the pixel limit of 1000 (10100 pixels by frame 98)")
        #expect(info(validate(gif))?.frames == 100)
    }

    @Test func zeroPixelImages() {
        #expect(reason(validate(Fixture.withIHDRSize(Fixture.png(8, 8), width: 0, height: 0))) == "PNG has no pixels: IHDR gives 0x0")
        var gif = Fixture.gif(8, 8)
        gif[6] = 0; gif[7] = 0
        #expect(reason(validate(gif)) == "GIF has no pixels: logical screen is 0x8")
        var jpeg = Fixture.jpeg(16, 16)
        let sof = Fixture.jpegFrameHeader(jpeg)
        jpeg[sof + 5] = 0; jpeg[sof + 6] = 0  // height 0 (DNL, which libjpeg refuses)
        #expect(reason(validate(jpeg))?.hasPrefix("JPEG has no pixels: ") == true)
        #expect(reason(validate(Handmade.bmp(0, 10))) == "BMP has no pixels: header gives 0x10")
    }

    /// A frame reaching outside the logical screen is drawn clipped by
    /// giflib's users, Pillow, browsers and ImageIO: the image is good. Made
    /// by giflib's encoder (frame 3 is 21x16 at 21,16 of a 40x30 screen) and
    /// by hand (frame 2 of 100x100 lies wholly right of the 100x100 screen).
    @Test func gifFrameOutsideTheScreenIsShown() {
        let encoded = validate(Fixture.gif(40, 30, frames: 3, lastOutside: true))
        #expect(info(encoded)?.frames == 3, "\(encoded)")
        // Pixel 0, then codes 6, 7, ... each one pixel longer than the last
        // (each defined by its own use), until 100x100 pixels are out.
        var codes = [4, 0], pixels = 1
        while pixels < 100 * 100 {
            codes.append(6 + codes.count - 2)
            pixels += codes.count - 1
        }
        let frame = LZWGIF.Frame(width: 100, height: 100, codes: codes + [5])
        var gif = LZWGIF.gif([frame, frame])
        // Frame 2's image descriptor: its Left field to 200.
        let second = gif.indices.filter { gif[$0] == 0x2C }.last!
        gif[second + 1] = 200
        let r = validate(gif)
        #expect(info(r)?.frames == 2, "\(r)")
        #expect(info(r)?.width == 100)
    }

    @Test func notImages() {
        #expect(reason(validate([])) == "empty body")
        #expect(reason(validate(Array("<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>".utf8))) == "not an image (looks like HTML)")
        #expect(reason(validate(Array("\u{FEFF}  <HTML><head>".utf8))) == "not an image (looks like HTML)")
        #expect(reason(validate(Array(#"{"error": "not found"}"#.utf8))) == "not an image (looks like JSON)")
        #expect(reason(validate(Array("Access denied".utf8))) == "not an image (looks like text)")
        #expect(reason(validate([0x1F, 0x8B, 0x08, 0x00, 0x01])) == "not an image (looks like gzip-compressed data)")
        // The first byte alone does not make a JPEG or a GIF.
        #expect(reason(validate(Array("GIF is a format".utf8))) == "not an image (looks like text)")
    }
}

// MARK: formats passed on their signature

@Suite struct DecodeSignatureFormats {
    /// The WebP header reader of `--no-validate` (decoding: DecodeWebP).
    @Test func webpDimensionsFromTheHeader() {
        var options = ValidationOptions()
        options.decode = false
        #expect(validate(Handmade.webpLossless(100, 50), options) == .success(ImageInfo(format: .webp, width: 100, height: 50, frames: 1)))
        #expect(validate(Handmade.webpLossy(640, 480), options) == .success(ImageInfo(format: .webp, width: 640, height: 480, frames: 1)))
        #expect(validate(Handmade.webpAnimated(300, 200, frames: 5), options) == .success(ImageInfo(format: .webp, width: 300, height: 200, frames: 5)))
    }

    @Test func truncatedWebPFromTheHeader() {
        var options = ValidationOptions()
        options.decode = false
        let webp = Handmade.webpLossy(640, 480)
        #expect(reason(validate(Array(webp.dropLast(3)), options)) == "truncated WebP: \(webp.count - 3) of \(webp.count) bytes")
    }

    @Test func bmpDimensions() {
        // A negative height is a top-down bitmap, not a negative size.
        #expect(validate(Handmade.bmp(300, -200)) == .success(ImageInfo(format: .bmp, width: 300, height: 200, frames: 1)))
    }

    @Test func otherFormatsPassWithoutDimensions() {
        #expect(validate(Array("%PDF-1.4".utf8)) == .success(ImageInfo(format: .pdf)))
        let svg = Array(#"<svg xmlns="http://www.w3.org/2000/svg"></svg>"#.utf8)
        #expect(validate(svg) == .success(ImageInfo(format: .svg)))
    }

    @Test func strictFormatsRejectWhatIsNotDecoded() {
        var options = ValidationOptions()
        options.strictFormats = true
        #expect(reason(validate(Handmade.bmp(3, 3), options))?.hasPrefix("BMP is not accepted: strict formats allow only JPEG, PNG") == true)
        #expect(info(validate(Fixture.png(4, 4), options)) != nil)
    }
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
}
