import Testing
import TestSupport
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// Verdicts as the apps' decoders give them. Each image here is
/// made in the test; each failed (or passed wrongly) before the fix.
@Suite struct DecodeVerdicts {
    // MARK: sniffing as SDWebImage does

    /// `+[NSData sd_imageFormatForImageData:]`, SDWebImage 5.x,
    /// SDWebImage/Core/NSData+ImageContentType.m lines 30-41: the first byte
    /// alone names JPEG (0xFF, line 31), PNG (0x89, line 33), GIF (0x47,
    /// line 35), TIFF (0x49, 0x4D, lines 37-38) and BMP (0x42, line 40);
    /// lines 42-85: RIFF....WEBP in 12 bytes, ftyp brands at 4..<12, `PDF`
    /// at 1..<4, `</svg>` in the last 100 bytes.
    @Test(arguments: [
        ([0xFF, 0x00], SDWebImageFormat.jpeg),
        ([0x89, 0x00, 0x00, 0x00], .png),
        ([0x89] + Array("PNG\r\n\u{1A}\n".utf8), .png),
        ([0x47, 0x01], .gif),
        ([0x49, 0x00], .tiff),
        ([0x4D, 0x00], .tiff),
        ([0x42, 0x00], .bmp),
        (Array("RIFF\0\0\0\0WEBP".utf8), .webp),
        (Array("RIFF\0\0\0\0WEBX".utf8), .undefined),
        (Array("RIFF\0\0\0\0WEB".utf8), .undefined),
        ([0, 0, 0, 0x18] + Array("ftypheic".utf8), .heic),
        ([0, 0, 0, 0x18] + Array("ftyphevx".utf8), .heic),
        ([0, 0, 0, 0x18] + Array("ftypmsf1".utf8), .heif),
        // AVIF is not SDWebImage's own: its AVIF coder sniffs it.
        ([0, 0, 0, 0x18] + Array("ftypavif".utf8), .undefined),
        (Array("%PDF-1.4".utf8), .pdf),
        (Array("<svg></svg>".utf8), .svg),
        (Array("<html></html>".utf8), .undefined),
        ([0x01, 0x02], .undefined),
    ] as [([UInt8], SDWebImageFormat)])
    func sdWebImageSniff(_ data: [UInt8], _ format: SDWebImageFormat) {
        #expect(SDWebImageFormat.sniff(data) == format)
    }

    /// A damaged PNG signature: SDWebImage calls it PNG (line 33) and its
    /// PNG coder, asked first (SDImageCodersManager.m line 38 lists
    /// ImageIO, GIF, APNG and `decodedImageWithData:` walks them in
    /// reverse; SDImageIOAnimatedCoder.m line 588 answers
    /// `canDecodeFromData:` by that sniff), gets nothing decodable: the
    /// app shows nothing, so the file is broken, not an unknown format.
    @Test func damagedPNGSignatureIsABrokenPNG() {
        let png = Fixture.png(8, 8)
        #expect(info(validate(png))?.format == .png)
        for (at, value) in [(1, UInt8(0x51)), (3, 0x48), (4, 0x0A), (5, 0x0D), (6, 0x00), (7, 0x0D)] {
            var damaged = png
            damaged[at] = value
            let r = reason(validate(damaged))
            #expect(r?.hasPrefix("corrupt PNG: ") == true, "byte \(at) = \(value): \(r ?? "accepted")")
        }
        // 0x89 and nothing of a PNG after it.
        #expect(reason(validate([0x89, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08]))?.hasPrefix("corrupt PNG: ") == true)
        // 0x47 with no GIF signature goes to SDWebImage's GIF coder.
        #expect(reason(validate([0x47, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05]))?.hasPrefix("corrupt GIF: ") == true)
        // 0x49, 0x4D and 0x42 go to SDImageIOCoder, where ImageIO reads
        // the content itself (camera RAW files start `II`): kept.
        for first: UInt8 in [0x49, 0x4D, 0x42] {
            #expect(info(validate([first, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05]))?.format == .unknown)
        }
    }

    // MARK: GIF

    /// LZW minimum code size 9: giflib refuses it with the error code of a
    /// failed read; the file is whole, so the reason says what is wrong.
    @Test func gifCodeSizeAboveEightIsNamed() {
        let gif = LZWGIF.gif([.init(width: 2, height: 1, codeSize: 9, codes: [512, 0, 1, 513])])
        #expect(gif.last == 0x3B)
        #expect(reason(validate(gif)) == "corrupt GIF: LZW minimum code size 9 in frame 1 is above 8 (giflib refuses it)")
    }

    // MARK: TIFF

    /// A baseline TIFF made by hand: 4x4, 8-bit grey, one uncompressed
    /// strip of 16 bytes, every field libtiff needs. `counts` overrides
    /// StripByteCounts, `spp` SamplesPerPixel, `rows` RowsPerStrip.
    static func tiff(width: UInt32 = 4, counts: UInt32? = nil, spp: UInt16 = 1, rows: UInt32 = 4,
                     ifdAt: UInt32? = nil, bits: UInt16 = 8) -> [UInt8] {
        func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }
        // 16 pixel bytes whatever the width claims (4x4 at 8 bits).
        let pixels = (0..<16).map { UInt8($0) }
        let ifd = UInt32(8 + pixels.count)
        var b: [UInt8] = [0x49, 0x49] + le16(42) + le32(ifdAt ?? ifd) + pixels
        func field(_ tag: UInt16, _ type: UInt16, _ value: UInt32) -> [UInt8] {
            le16(tag) + le16(type) + le32(1) + (type == 3 ? le16(UInt16(value)) + [0, 0] : le32(value))
        }
        let fields = [
            field(256, 4, width), field(257, 4, 4), field(258, 3, UInt32(bits)), field(259, 3, 1),
            field(262, 3, 1), field(273, 4, 8), field(277, 3, UInt32(spp)), field(278, 4, rows),
            field(279, 4, counts ?? UInt32(pixels.count)),
        ]
        b += le16(UInt16(fields.count)) + fields.flatMap { $0 } + le32(0)
        return b
    }

    @Test func tiffHeaderChecks() {
        #expect(validate(Self.tiff()) == .success(ImageInfo(format: .tiff, width: 4, height: 4, frames: 1)))
        // The first IFD beyond the end of the data.
        #expect(reason(validate(Self.tiff(ifdAt: 5000))) == "truncated TIFF: first IFD at byte 5000 of 138")
        // BigTIFF: header, then a first IFD beyond the end (it passed on
        // its signature before).
        let bigtiff: [UInt8] = [0x49, 0x49, 43, 0, 8, 0, 0, 0] + [0x00, 0x10, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16)
        #expect(reason(validate(bigtiff)) == "truncated TIFF: first IFD at byte 4096 of 32")
        // SamplesPerPixel 65535 with no extra samples declared.
        #expect(reason(validate(Self.tiff(spp: 65535))) == "corrupt TIFF: SamplesPerPixel 65535 with 0 extra samples")
        // A strip no decoder allocates: 300,000 pixels wide (1.2 million
        // pixels, within the pixel limit), 65535 bits a sample, 4 rows.
        let hugeStrip = Self.tiff(width: 300_000, spp: 1, rows: 0xFFFF_FFFF, bits: 65535)
        #expect(reason(validate(hugeStrip)) == "corrupt TIFF: a strip of 4 rows of 300000 pixels x 1 samples x 65535 bits is 9830250000 bytes, over 8 GiB")
        #expect(reason(validate(Self.tiff(rows: 0))) == "corrupt TIFF: RowsPerStrip 0")
    }

    /// StripByteCounts overstating the strip while all 16 pixel bytes are
    /// there: libtiff (ImageIO's TIFF reader) reads it (tif_dirread.c
    /// re-estimates a single uncompressed strip whose count passes the
    /// file). The same file with pixel bytes missing stays truncated.
    @Test func tiffOverstatedStripByteCountsIsRead() {
        let overstated = Self.tiff(counts: 1000)
        #expect(validate(overstated) == .success(ImageInfo(format: .tiff, width: 4, height: 4, frames: 1)))
        // Pixels cut: the IFD moved to the front, 6 of the 16 bytes kept.
        var cut = Self.tiff(counts: 16)
        let ifd = Array(cut[24...])
        cut = Array(cut[0..<4]) + [8, 0, 0, 0] + ifd.map { $0 }
        // Fix StripOffsets to point after the IFD, then keep 6 pixel bytes.
        let offsetsField = 8 + 2 + 12 * 5
        let pixelsAt = UInt32(cut.count)
        for k in 0..<4 { cut[offsetsField + 8 + k] = UInt8(truncatingIfNeeded: pixelsAt >> (8 * UInt32(k))) }
        cut += (0..<6).map { UInt8($0) }
        let r = reason(validate(cut))
        #expect(r?.hasPrefix("truncated TIFF: strip 1 of 1 ends at byte \(Int(pixelsAt) + 16) of \(cut.count) (libtiff: ") == true,
                "\(r ?? "accepted")")
    }

    // MARK: BMP

    /// An 8-bit BMP (BITMAPINFOHEADER) with a palette of `colors` entries
    /// written (biClrUsed `clrUsed`) and a bit count of `bits`.
    static func bmp8(bits: UInt16 = 8, clrUsed: UInt32 = 0, colors: Int = 256) -> [UInt8] {
        func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }
        let pixels = [UInt8](repeating: 1, count: 4 * 4)
        let offBits = UInt32(54 + 4 * colors)
        var b: [UInt8] = [0x42, 0x4D] + le32(offBits + UInt32(pixels.count)) + [0, 0, 0, 0] + le32(offBits)
        b += le32(40) + le32(4) + le32(4) + le16(1) + le16(bits) + le32(0) + le32(UInt32(pixels.count))
        b += le32(2835) + le32(2835) + le32(clrUsed) + le32(0)
        b += [UInt8](repeating: 0x80, count: 4 * colors) + pixels
        return b
    }

    @Test func bmpHeaderChecks() {
        #expect(validate(Self.bmp8()) == .success(ImageInfo(format: .bmp, width: 4, height: 4, frames: 1)))
        #expect(validate(Self.bmp8(clrUsed: 2, colors: 2)) == .success(ImageInfo(format: .bmp, width: 4, height: 4, frames: 1)))
        #expect(reason(validate(Self.bmp8(bits: 30000))) == "corrupt BMP: bit count 30000")
        #expect(reason(validate(Self.bmp8(clrUsed: 305_402_420))) == "corrupt BMP: a palette of 305402420 colours")
        // A palette within Pillow's limit that runs past the data.
        let r = reason(validate(Self.bmp8(clrUsed: 60000, colors: 2)))
        #expect(r == "truncated BMP: the palette of 60000 colours ends at byte 240054 of \(Self.bmp8(colors: 2).count)")
    }

    // MARK: HEIF image sequences

    /// A HEIC made by libheif (x265), then a `moov` with one track of three
    /// samples and an `mdat` holding them, as a .heics carries its
    /// sequence after the still primary image. libheif 1.15 reads only the
    /// primary image; the samples are checked from the sample table.
    static func heics() -> (file: [UInt8], samplesAt: Int) {
        let still = ModernFixture.heic(16, 16)
        func be32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(8 + payload.count) + Array(type.utf8) + payload }
        func full(_ type: String, _ payload: [UInt8]) -> [UInt8] { box(type, [0, 0, 0, 0] + payload) }
        let sizes = [300, 200, 100]
        // moov's size does not depend on the offsets: build once to measure.
        func moov(_ mdatAt: Int) -> [UInt8] {
            let stsz = full("stsz", be32(0) + be32(sizes.count) + sizes.flatMap(be32))
            let stsc = full("stsc", be32(1) + be32(1) + be32(sizes.count) + be32(1))
            let stco = full("stco", be32(1) + be32(mdatAt + 8))
            let stbl = box("stbl", stsz + stsc + stco)
            return box("moov", box("trak", box("mdia", box("minf", stbl))))
        }
        let mdatAt = still.count + moov(0).count
        let samples = (0..<sizes.reduce(0, +)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        return (still + moov(mdatAt) + box("mdat", samples), mdatAt + 8)
    }

    @Test func heifSequenceCutShortIsRejected() {
        let (heics, samplesAt) = Self.heics()
        #expect(info(validate(heics))?.format == .heic, "\(validate(heics))")
        for fraction in [0.9, 0.6] {
            let cut = Array(heics.prefix(Int(Double(heics.count) * fraction)))
            let r = reason(validate(cut))
            #expect(r?.hasPrefix("truncated HEIC: ") == true, "cut at \(fraction): \(r ?? "accepted")")
        }
        // Cut inside the last sample, the mdat's size patched to match:
        // every box is whole, the samples are not.
        var patched = Array(heics.prefix(heics.count - 50))
        let mdat = ModernFixture.boxes(heics).last!
        #expect(mdat.type == "mdat")
        Fixture.put32(&patched, mdat.offset, UInt32(mdat.size - 50))
        #expect(reason(validate(patched))
                == "truncated HEIC: track 1: chunk 1 (samples 1-3 at byte \(samplesAt)) ends past the end of the data (\(patched.count) bytes)")
    }
}
