import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

private func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

/// An ISO-BMFF file start: the `ftyp` box with its brands.
private func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
    let size = UInt32(16 + 4 * compatible.count)
    let be = [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
    return be + ascii("ftyp") + ascii(major) + [0, 0, 0, 0] + compatible.flatMap(ascii) + ascii("\0\0\0\u{8}free")
}

/// An ISO-BMFF box.
func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
    let size = UInt32(8 + payload.count)
    return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + Array(type.utf8) + payload
}

/// `meta` (a full box) holding `iprp/ipco` with one `ispe` per size.
private func isoMeta(_ sizes: [(UInt32, UInt32)]) -> [UInt8] {
    func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    let ispes = sizes.flatMap { box("ispe", [0, 0, 0, 0] + be($0.0) + be($0.1)) }
    return box("meta", [0, 0, 0, 0] + box("hdlr", [UInt8](repeating: 0, count: 24)) + box("iprp", box("ipco", ispes)))
}

struct SniffCase: CustomTestStringConvertible, Sendable {
    var name: String
    var bytes: [UInt8]
    var format: ImageFormat?
    var testDescription: String { name }
}

// MARK: which format SDWebImage (and ImageIO behind it) sees

@Suite struct DecodeFormatSniffing {
    /// Expected formats from SDWebImage's `+[NSData sd_imageFormatForImageData:]`
    /// (SDWebImage/Core/NSData+ImageContentType.m: 0xFF is JPEG; `ftypheic
    /// heix hevc hevx` HEIC; `ftypmif1 msf1` HEIF; RIFF....WEBP), from
    /// `+[SDImageAVIFCoder isAVIFFormatForData:]` (SDWebImageAVIFCoder:
    /// `ftypavif avis`), and from the JPEG XL signatures (ISO/IEC 18181-2:
    /// the codestream's FF 0A, the container's `JXL ` box), which SDWebImage
    /// leaves to ImageIO through `SDImageIOCoder` (`canDecodeFromData:`
    /// answers YES for all data).
    static let cases: [SniffCase] = [
        SniffCase(name: "JPEG", bytes: [0xFF, 0xD8, 0xFF, 0xE0], format: .jpeg),
        SniffCase(name: "a leading FF is JPEG to SDWebImage", bytes: [0xFF, 0xD9, 0x00], format: .jpeg),
        SniffCase(name: "FF alone", bytes: [0xFF], format: .jpeg),
        SniffCase(name: "JPEG XL codestream", bytes: [0xFF, 0x0A, 0xFA, 0x1F], format: .jxl),
        SniffCase(name: "JPEG XL container",
                  bytes: [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A] + [0, 0, 0, 0x14] + ascii("ftypjxl "),
                  format: .jxl),
        SniffCase(name: "PNG", bytes: [0x89] + ascii("PNG\r\n\u{1A}\n"), format: .png),
        SniffCase(name: "GIF89a", bytes: ascii("GIF89a"), format: .gif),
        SniffCase(name: "TIFF II", bytes: [0x49, 0x49, 0x2A, 0x00], format: .tiff),
        SniffCase(name: "TIFF MM", bytes: [0x4D, 0x4D, 0x00, 0x2A], format: .tiff),
        SniffCase(name: "BigTIFF", bytes: [0x49, 0x49, 0x2B, 0x00], format: .tiff),
        SniffCase(name: "BMP", bytes: Handmade.bmp(1, 1), format: .bmp),
        SniffCase(name: "WebP", bytes: ascii("RIFF\0\0\0\0WEBP"), format: .webp),
        SniffCase(name: "RIFF WAVE", bytes: ascii("RIFF\0\0\0\0WAVE"), format: nil),
        SniffCase(name: "ICO", bytes: [0, 0, 1, 0, 1, 0], format: .ico),
        SniffCase(name: "ICO with no image", bytes: [0, 0, 1, 0, 0, 0], format: nil),
        SniffCase(name: "CUR", bytes: [0, 0, 2, 0, 1, 0], format: nil),
        SniffCase(name: "ftyp avif", bytes: ftyp("avif", ["avif", "mif1", "miaf"]), format: .avif),
        SniffCase(name: "ftyp avis (AVIF sequence)", bytes: ftyp("avis", ["avis", "msf1"]), format: .avif),
        SniffCase(name: "ftyp heic", bytes: ftyp("heic", ["mif1", "heic"]), format: .heic),
        SniffCase(name: "ftyp heix", bytes: ftyp("heix", ["mif1"]), format: .heic),
        SniffCase(name: "ftyp hevc (sequence)", bytes: ftyp("hevc", ["msf1"]), format: .heic),
        SniffCase(name: "ftyp hevx (sequence)", bytes: ftyp("hevx", []), format: .heic),
        SniffCase(name: "ftyp mif1 (HEIF)", bytes: ftyp("mif1", ["mif1"]), format: .heif),
        SniffCase(name: "ftyp msf1 (HEIF sequence)", bytes: ftyp("msf1", ["msf1"]), format: .heif),
        SniffCase(name: "ftyp mif1 listing avif", bytes: ftyp("mif1", ["mif1", "avif"]), format: .avif),
        SniffCase(name: "ftyp msf1 listing hevc", bytes: ftyp("msf1", ["msf1", "hevc"]), format: .heic),
        SniffCase(name: "ftyp of a 256-byte box is not ICO", bytes: [0, 0, 1, 0] + ascii("ftypheic") + [UInt8](repeating: 0, count: 4), format: .heic),
        SniffCase(name: "ftyp isom (an MP4)", bytes: ftyp("isom", ["isom", "mp42"]), format: nil),
        SniffCase(name: "PDF", bytes: ascii("%PDF-1.5"), format: .pdf),
        SniffCase(name: "SVG", bytes: ascii("<svg xmlns='http://www.w3.org/2000/svg'></svg>"), format: .svg),
        SniffCase(name: "text starting with B", bytes: ascii("Bad Gateway"), format: nil),
        SniffCase(name: "text starting with I", bytes: ascii("Internal error"), format: nil),
        SniffCase(name: "text starting with M", bytes: ascii("Moved"), format: nil),
    ]

    @Test(arguments: cases)
    func sniff(_ c: SniffCase) {
        #expect(ImageFormat.sniff(c.bytes) == c.format)
    }

    @Test func everyFormatFitsTheReportsFourBits() {
        #expect(ImageFormat.allCases.count <= 15)
        for format in ImageFormat.allCases {
            var r = EntryResult()
            r.status = 200
            r.format = format
            #expect(r.format == format && r.status == 200)
        }
    }
}

// MARK: formats read from their header, never "not an image"

@Suite struct DecodeRecognisedFormats {
    @Test func icoTakesItsLargestImage() {
        let png = Fixture.png(300, 200)
        let ico = Handmade.ico([(16, 16, [UInt8](repeating: 0, count: 40)), (256, 256, png), (48, 48, [1, 2, 3])])
        // The PNG entry's own IHDR (300x200) beats the 256x256 its entry claims.
        #expect(validate(ico) == .success(ImageInfo(format: .ico, width: 300, height: 200, frames: 1)))
        let small = Handmade.ico([(16, 16, [1]), (32, 32, [2])])
        #expect(validate(small) == .success(ImageInfo(format: .ico, width: 32, height: 32, frames: 1)))
    }

    @Test func icoCutShortFails() {
        let ico = Handmade.ico([(16, 16, [UInt8](repeating: 7, count: 40)), (32, 32, [UInt8](repeating: 7, count: 100))])
        #expect(reason(validate(Array(ico.prefix(20)))) == "truncated ICO: directory of 2 images incomplete")
        #expect(reason(validate(Array(ico.dropLast(1)))) == "truncated ICO: image 2 ends at byte \(ico.count) of \(ico.count - 1)")
    }

    @Test func icoOverThePixelLimit() {
        var options = ValidationOptions()
        options.maxPixels = 1000
        let ico = Handmade.ico([(16, 16, [1]), (64, 64, [2])])
        #expect(reason(validate(ico, options)) == "ICO 64x64 exceeds the pixel limit of 1000")
    }

    @Test(arguments: [true, false])
    func tiffDimensions(_ littleEndian: Bool) {
        #expect(validate(Handmade.tiff(37, 23, littleEndian: littleEndian)) == .success(ImageInfo(format: .tiff, width: 37, height: 23, frames: 1)))
        #expect(validate(Handmade.tiff(37, 23, littleEndian: littleEndian, strips: 1)) == .success(ImageInfo(format: .tiff, width: 37, height: 23, frames: 1)))
    }

    @Test func tiffCutShortFails() {
        // Strips first, then their offset arrays, then the IFD: cutting
        // into the IFD, or moving a strip past the end, is seen.
        let tiff = Handmade.tiff(37, 23)
        #expect(reason(validate(Array(tiff.prefix(tiff.count - 10)))) == "truncated TIFF: first IFD of 5 entries incomplete")
        var outside = tiff
        outside[8 + 20 + 4] = 0xF0  // the second strip's offset, far past the end
        #expect(reason(validate(outside))?.hasPrefix("truncated TIFF: strip 2 of 2 ends at byte ") == true)
        #expect(reason(validate(Array(tiff.prefix(6)))) == "truncated TIFF: header incomplete")
    }

    @Test func tiffBombIsRefusedFromItsHeader() {
        #expect(reason(validate(Handmade.tiff(60000, 60000))) == "TIFF 60000x60000 exceeds the pixel limit of 100000000")
    }

    @Test func bmpRowsMustAllBeThere() {
        #expect(validate(Handmade.bmp(37, 23)) == .success(ImageInfo(format: .bmp, width: 37, height: 23, frames: 1)))
        let cut = Handmade.bmp(37, 23, rows: 22)
        #expect(reason(validate(cut)) == "truncated BMP: \(cut.count) bytes, the rows need \(54 + 23 * 112)")
    }

    @Test func bmpBombIsRefusedFromItsHeader() {
        // RLE8 (compression 1): a few bytes can claim any size.
        var bomb = Handmade.bmp(50000, 50000, rows: 0) + [0, 1]
        bomb[28] = 8
        bomb[30] = 1
        #expect(reason(validate(bomb)) == "BMP 50000x50000 exceeds the pixel limit of 100000000")
    }

    @Test func icoBombIsRefusedFromItsPNGHeader() {
        let png = Fixture.withIHDRSize(Fixture.png(8, 8), width: 60000, height: 60000)
        #expect(reason(validate(Handmade.ico([(0, 0, png)]))) == "ICO 60000x60000 exceeds the pixel limit of 100000000")
    }

    @Test func isoSizeFromTheLargestISPE() {
        var options = ValidationOptions()
        options.decode = false  // header only, whether or not a decoder exists
        let tree = ftyp("heic", ["mif1"]) + isoMeta([(64, 48), (320, 240), (32, 24)]) + box("mdat", [1, 2, 3])
        #expect(validate(tree, options) == .success(ImageInfo(format: .heic, width: 320, height: 240, frames: 1)))
        #expect(validate(ftyp("avif", ["avif"]), options) == .success(ImageInfo(format: .avif, frames: 1)))
        // A sequence keeps its frames in a track: not counted from the header.
        #expect(validate(ftyp("avis", ["avis"]) + box("moov", []), options) == .success(ImageInfo(format: .avif)))
    }

    @Test func isoCutShortFails() {
        var options = ValidationOptions()
        options.decode = false
        let file = ftyp("avif", ["avif", "mif1"]) + isoMeta([(64, 48)]) + box("mdat", [UInt8](repeating: 9, count: 50))
        #expect(reason(validate(Array(file.dropLast(10)), options)) == "truncated AVIF: box mdat ends at byte \(file.count) of \(file.count - 10)")
        #expect(reason(validate(Array(file.dropLast(55)), options))?.hasPrefix("truncated AVIF: a box header cut short at byte ") == true)
    }

    @Test func isoBombIsRefusedFromItsHeader() {
        var options = ValidationOptions()
        options.decode = false
        let bomb = ftyp("heic", ["mif1"]) + isoMeta([(40000, 40000)]) + box("mdat", [0])
        #expect(reason(validate(bomb, options)) == "HEIC 40000x40000 exceeds the pixel limit of 100000000")
    }

    /// SizeHeader fields as (value, bits), least significant bit first.
    static func jxlCodestream(_ fields: [(Int, Int)]) -> [UInt8] {
        var bits: [Int] = []
        for (value, n) in fields { for k in 0..<n { bits.append(value >> k & 1) } }
        var bytes = [UInt8](repeating: 0, count: (bits.count + 7) / 8 + 4)
        for (i, bit) in bits.enumerated() { bytes[i / 8] |= UInt8(bit << (i % 8)) }
        return [0xFF, 0x0A] + bytes
    }

    @Test func jxlSizeHeader() {
        var options = ValidationOptions()
        options.decode = false
        // div8: 8 x (1 + 4) high, ratio 1 (1:1).
        #expect(validate(Self.jxlCodestream([(1, 1), (4, 5), (1, 3)]), options) == .success(ImageInfo(format: .jxl, width: 40, height: 40)))
        // 9-bit height 300, ratio 5 (16:9) gives the width.
        #expect(validate(Self.jxlCodestream([(0, 1), (0, 2), (299, 9), (5, 3)]), options) == .success(ImageInfo(format: .jxl, width: 533, height: 300)))
        // Explicit 13-bit width.
        #expect(validate(Self.jxlCodestream([(0, 1), (0, 2), (22, 9), (0, 3), (1, 2), (4999, 13)]), options)
            == .success(ImageInfo(format: .jxl, width: 5000, height: 23)))
        // The same codestream in the container's jxlc box.
        let signature: [UInt8] = [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]
        let container = signature + box("ftyp", ascii("jxl \0\0\0\0jxl ")) + box("jxlc", Self.jxlCodestream([(1, 1), (4, 5), (1, 3)]))
        #expect(validate(container, options) == .success(ImageInfo(format: .jxl, width: 40, height: 40)))
        #expect(reason(validate(Array(container.dropLast(3)), options))?.hasPrefix("truncated JPEG XL: box jxlc ends at byte ") == true)
        #expect(reason(validate([0xFF, 0x0A], options)) == "truncated JPEG XL: size header incomplete")
    }

    @Test func jxlBombIsRefusedFromItsHeader() {
        var options = ValidationOptions()
        options.decode = false
        // 30-bit height 2^30, 1:1.
        let bomb = Self.jxlCodestream([(0, 1), (3, 2), (1 << 30 - 1, 30), (1, 3)])
        #expect(reason(validate(bomb, options)) == "JPEG XL 1073741824x1073741824 exceeds the pixel limit of 100000000")
        // Decoded, libjxl reads the whole image header before it gives the
        // size, and the zeros after this SizeHeader are no valid header:
        // refused before any pixel all the same. A real image with a huge
        // SizeHeader: DecodeModernBombs.jxlSizeHeaderClaimingHugeDimensions.
        #expect(reason(validate(bomb)) == "corrupt JPEG XL: libjxl rejected the data in the header")
    }
}

// MARK: unknown data: kept, unless formats are strict

@Suite struct DecodeUnknownFormat {
    @Test func binaryOfNoKnownFormatIsUnknownNotBroken() {
        #expect(validate([0x00, 0x01, 0x02, 0xFE, 0x10]) == .success(ImageInfo(format: .unknown)))
        // An MP4 is no format SDWebImage names, yet ImageIO decides.
        #expect(validate(ftyp("isom", ["isom"])) == .success(ImageInfo(format: .unknown)))
        var options = ValidationOptions()
        options.decode = false
        #expect(validate([0x00, 0x01, 0x02, 0xFE, 0x10], options) == .success(ImageInfo(format: .unknown)))
    }

    @Test func strictFormatsRefuseUnknownAndUndecodedFormats() {
        var options = ValidationOptions()
        options.strictFormats = true
        let decoded = ImageFormat.allCases.filter(\.isDecodedHere).map(\.displayName)
        #expect(decoded.starts(with: ["JPEG", "PNG", "GIF"]))
        let allowed = decoded.dropLast().joined(separator: ", ") + " and " + decoded.last!
        #expect(reason(validate([0x00, 0x01, 0x02, 0xFE, 0x10], options))
            == "unknown format (unknown signature 00 01 02 fe) is not accepted: strict formats allow only \(allowed)")
        #expect(reason(validate(Handmade.tiff(4, 4), options)) == "TIFF is not accepted: strict formats allow only \(allowed)")
        #expect(reason(validate(Handmade.ico([(1, 1, [1])]), options)) == "ICO is not accepted: strict formats allow only \(allowed)")
    }

    @Test func textIsStillNotAnImage() {
        #expect(reason(validate(ascii("Bad Gateway"))) == "not an image (looks like text)")
        #expect(reason(validate(ascii("<html><body>404</body></html>"))) == "not an image (looks like HTML)")
    }
}
