import CImageCodecs
import ImgWarmSupport

/// Dimensions read from the first bytes of an image, without decoding:
/// used when decoding is off (`--no-validate`) and for the formats this
/// build does not decode, so `--max-pixels` applies to every format whose
/// header gives its size cheaply. Where the header also says how long the
/// data must be (RIFF size, ICO directory, BMP rows, TIFF strips), data
/// cut short fails here.
public enum ImageHeader {
    /// What the header says, or a failure when the header itself shows the
    /// data is unusable (a truncated WebP, a BMP header of unknown size).
    /// Nil dimensions mean the header does not give them cheaply.
    public static func read(_ format: ImageFormat, _ b: UnsafeRawBufferPointer,
                            maxPixels: UInt64 = ValidationOptions().maxPixels) -> Result<ImageInfo, ValidationFailure> {
        switch format {
        case .png: return .success(png(b))
        case .gif: return .success(gif(b))
        case .jpeg: return .success(jpeg(b))
        case .webp: return webp(b)
        case .bmp: return bmp(b, maxPixels: maxPixels)
        case .ico: return ico(b)
        case .tiff: return tiff(b, maxPixels: maxPixels)
        case .avif, .heic, .heif: return ContainerHeaders.iso(format, b)
        case .jxl: return ContainerHeaders.jxl(b)
        case .pdf, .svg, .unknown: return .success(ImageInfo(format: format))
        }
    }

    static func png(_ b: UnsafeRawBufferPointer) -> ImageInfo {
        guard b.count >= 24, b[12] == 0x49, b[13] == 0x48, b[14] == 0x44, b[15] == 0x52 else {
            return ImageInfo(format: .png)
        }
        return ImageInfo(format: .png, width: Int(be32(b, 16)), height: Int(be32(b, 20)))
    }

    static func gif(_ b: UnsafeRawBufferPointer) -> ImageInfo {
        guard b.count >= 10 else { return ImageInfo(format: .gif) }
        return ImageInfo(format: .gif, width: Int(le16(b, 6)), height: Int(le16(b, 8)))
    }

    /// The first SOFn before the first scan (JPEGMarkers: the walk the
    /// decode memory estimate shares): no frame header before the scan
    /// data means none is coming.
    static func jpeg(_ b: UnsafeRawBufferPointer) -> ImageInfo {
        var info = ImageInfo(format: .jpeg)
        JPEGMarkers.walk(b) { segment in
            guard JPEGMarkers.isFrameHeader(segment.marker) else { return segment.marker != 0xDA }
            let p = segment.payload.lowerBound
            if segment.payload.count >= 5 {
                info = ImageInfo(format: .jpeg, width: Int(be16(b, p + 3)), height: Int(be16(b, p + 1)), frames: 1)
            }
            return false
        }
        return info
    }

    /// RIFF header, then the first chunk: VP8 (lossy), VP8L (lossless) or
    /// VP8X (extended; animated files carry one ANMF chunk per frame).
    static func webp(_ b: UnsafeRawBufferPointer) -> Result<ImageInfo, ValidationFailure> {
        guard b.count >= 12 else { return .failure(ValidationFailure("truncated WebP: no RIFF header")) }
        let riffEnd = UInt64(le32(b, 4)) + 8
        if riffEnd > UInt64(b.count) {
            return .failure(ValidationFailure("truncated WebP: \(b.count) of \(riffEnd) bytes"))
        }
        guard b.count >= 20 else { return .failure(ValidationFailure("truncated WebP: no chunk after the RIFF header")) }
        let chunk = fourCC(b, 12)
        let incomplete = ValidationFailure("truncated WebP: \(chunk.trimmingSpaces) header incomplete")
        switch chunk {
        case "VP8 ":
            guard b.count >= 30 else { return .failure(incomplete) }
            guard b[23] == 0x9D, b[24] == 0x01, b[25] == 0x2A else {
                return .failure(ValidationFailure("corrupt WebP: VP8 start code missing"))
            }
            return .success(ImageInfo(format: .webp, width: Int(le16(b, 26) & 0x3FFF), height: Int(le16(b, 28) & 0x3FFF), frames: 1))
        case "VP8L":
            guard b.count >= 25 else { return .failure(incomplete) }
            guard b[20] == 0x2F else { return .failure(ValidationFailure("corrupt WebP: VP8L signature missing")) }
            let bits = le32(b, 21)
            return .success(ImageInfo(format: .webp, width: Int(bits & 0x3FFF) + 1, height: Int((bits >> 14) & 0x3FFF) + 1, frames: 1))
        case "VP8X":
            guard b.count >= 30 else { return .failure(incomplete) }
            let animated = b[20] & 0x02 != 0
            let width = Int(le24(b, 24)) + 1, height = Int(le24(b, 27)) + 1
            return .success(ImageInfo(format: .webp, width: width, height: height,
                                      frames: animated ? countChunks("ANMF", b, from: 12) : 1))
        default:
            return .failure(ValidationFailure("corrupt WebP: unknown first chunk \(printable(b, 12))"))
        }
    }

    /// Counts RIFF chunks by their headers only (no payload is read).
    static func countChunks(_ id: String, _ b: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var count = 0
        var i = start
        while i + 8 <= b.count {
            if fourCC(b, i) == id { count += 1 }
            let size = Int(le32(b, i + 4))
            i += 8 + size + (size & 1)
        }
        return count > 0 ? count : nil
    }

    /// BITMAPCOREHEADER (12 bytes, 16-bit sides) or BITMAPINFOHEADER and
    /// later (signed 32-bit sides; a negative height means top-down rows).
    /// Uncompressed rows (BI_RGB, BI_BITFIELDS) must all be there: a BMP
    /// cut short ends before its last row.
    static func bmp(_ b: UnsafeRawBufferPointer, maxPixels: UInt64 = ValidationOptions().maxPixels) -> Result<ImageInfo, ValidationFailure> {
        guard b.count >= 26 else { return .failure(ValidationFailure("truncated BMP: header incomplete")) }
        let headerSize = le32(b, 14)
        let width: Int, height: Int, bitsPerPixel: Int, compression: UInt32
        if headerSize == 12 {
            width = Int(le16(b, 18)); height = Int(le16(b, 20))
            bitsPerPixel = Int(le16(b, 24)); compression = 0
        } else {
            guard headerSize >= 40 else {
                return .failure(ValidationFailure("corrupt BMP: unknown DIB header size \(headerSize)"))
            }
            guard b.count >= 34 else { return .failure(ValidationFailure("truncated BMP: header incomplete")) }
            width = Int(Int32(bitPattern: le32(b, 18)))
            height = abs(Int(Int32(bitPattern: le32(b, 22))))
            guard width >= 0 else { return .failure(ValidationFailure("corrupt BMP: negative width \(width)")) }
            bitsPerPixel = Int(le16(b, 28)); compression = le32(b, 30)
        }
        let info = ImageInfo(format: .bmp, width: width, height: height, frames: 1)
        // The size first: a bomb's header is refused as too large, whatever
        // else is wrong with it.
        if let failure = Limits.check(info, maxPixels: maxPixels) { return .failure(failure) }
        // Bit counts a decoder reads (ImageIO, browsers, Pillow's BIT2MODE);
        // 0 only where the pixels are an embedded JPEG or PNG (4, 5).
        let embedded = compression == 4 || compression == 5
        guard [1, 2, 4, 8, 16, 24, 32].contains(bitsPerPixel) || (bitsPerPixel == 0 && embedded) else {
            return .failure(ValidationFailure("corrupt BMP: bit count \(bitsPerPixel)"))
        }
        // A palette (up to 8 bits a pixel) follows the header: biClrUsed
        // entries, 0 meaning 2^bits; Pillow refuses more than 65,536 of
        // them ("Unsupported BMP Palette size"), and no decoder can read a
        // palette that runs past the data.
        if bitsPerPixel <= 8 && !embedded {
            let core = headerSize == 12
            var colors = 1 << bitsPerPixel
            if !core {
                guard b.count >= 50 else { return .failure(ValidationFailure("truncated BMP: header incomplete")) }
                let used = Int(le32(b, 46))
                if used > 65536 { return .failure(ValidationFailure("corrupt BMP: a palette of \(used) colours")) }
                if used > 0 { colors = used }
            }
            let paletteEnd = 14 + Int(headerSize) + colors * (core ? 3 : 4)
            if paletteEnd > b.count {
                return .failure(ValidationFailure("truncated BMP: the palette of \(colors) colours ends at byte \(paletteEnd) of \(b.count)"))
            }
        }
        // Row data only where its length follows from the header; RLE and
        // embedded JPEG/PNG data (compression 1, 2, 4, 5) say nothing cheap.
        guard compression == 0 || compression == 3, [1, 2, 4, 8, 16, 24, 32].contains(bitsPerPixel) else {
            return .success(info)
        }
        let stride = (width * bitsPerPixel + 31) / 32 * 4
        let (rows, overflow) = stride.multipliedReportingOverflow(by: height)
        let (end, past) = Int(le32(b, 10)).addingReportingOverflow(rows)
        if overflow || past || end > b.count {
            return .failure(ValidationFailure("truncated BMP: \(b.count) bytes, the rows need \(overflow || past ? "more" : String(end))"))
        }
        return .success(info)
    }

    /// ICONDIR and its 16-byte entries. Each image (a BMP without its file
    /// header, or a whole PNG) must lie inside the data. The size is the
    /// largest entry's: a side of 0 means 256, and an embedded PNG gives its
    /// own IHDR size, which may be larger. An icon's entries are sizes of
    /// one picture, not frames.
    static func ico(_ b: UnsafeRawBufferPointer) -> Result<ImageInfo, ValidationFailure> {
        let count = Int(le16(b, 4))
        guard b.count >= 6 + 16 * count else {
            return .failure(ValidationFailure("truncated ICO: directory of \(count) images incomplete"))
        }
        var best: (w: Int, h: Int) = (0, 0)
        for k in 0..<count {
            let e = 6 + 16 * k
            let size = Int(le32(b, e + 8)), offset = Int(le32(b, e + 12))
            guard size > 0 else { return .failure(ValidationFailure("corrupt ICO: image \(k + 1) is empty")) }
            guard offset + size <= b.count else {
                return .failure(ValidationFailure("truncated ICO: image \(k + 1) ends at byte \(offset + size) of \(b.count)"))
            }
            var w = b[e] == 0 ? 256 : Int(b[e]), h = b[e + 1] == 0 ? 256 : Int(b[e + 1])
            let image = UnsafeRawBufferPointer(rebasing: b[offset..<(offset + size)])
            if ImageFormat.sniff(image) == .png {
                let ihdr = png(image)
                if let pw = ihdr.width, let ph = ihdr.height { w = pw; h = ph }
            }
            // Sides of up to 2^32 each: compare the areas without overflow.
            if Double(w) * Double(h) > Double(best.w) * Double(best.h) { best = (w, h) }
        }
        return .success(ImageInfo(format: .ico, width: best.w, height: best.h, frames: 1))
    }

    /// The first IFD of a TIFF (classic or BigTIFF): ImageWidth (256) and
    /// ImageLength (257), the samples (258 BitsPerSample, 277
    /// SamplesPerPixel, 338 ExtraSamples), RowsPerStrip (278), and the
    /// strips or tiles (offsets 273/324, byte counts 279/325), which must
    /// lie inside the data. Where a strip's declared end passes the end of
    /// the data the header cannot tell a cut file from an overstated count
    /// (libtiff, and ImageIO on it, read the latter): libtiff then decodes
    /// the image and decides (tiff_validate.c).
    static func tiff(_ b: UnsafeRawBufferPointer, maxPixels: UInt64 = ValidationOptions().maxPixels) -> Result<ImageInfo, ValidationFailure> {
        guard b.count >= 8 else { return .failure(ValidationFailure("truncated TIFF: header incomplete")) }
        let little = b[0] == 0x49
        func u16(_ i: Int) -> UInt64 { UInt64(little ? le16(b, i) : be16(b, i)) }
        func u32(_ i: Int) -> UInt64 { UInt64(little ? le32(b, i) : be32(b, i)) }
        func u64(_ i: Int) -> UInt64 { little ? u32(i) | u32(i + 4) << 32 : u32(i) << 32 | u32(i + 4) }
        // BigTIFF (43): 8-byte offsets and counts, 20-byte entries.
        let big = u16(2) == 43
        if big && (b.count < 16 || u16(4) != 8) {
            return .failure(ValidationFailure(b.count < 16 ? "truncated TIFF: header incomplete" : "corrupt TIFF: BigTIFF offset size \(u16(4))"))
        }
        let offsetSize = big ? 8 : 4, entrySize = big ? 20 : 12, countSize = big ? 8 : 2
        func offset(_ i: Int) -> UInt64 { big ? u64(i) : u32(i) }
        let ifdAt = big ? u64(8) : u32(4)
        // TIFF 6.0 section 2: the first IFD follows the 8-byte header (16 in BigTIFF).
        guard ifdAt >= UInt64(big ? 16 : 8), ifdAt <= UInt64(b.count - countSize) else {
            return .failure(ValidationFailure("truncated TIFF: first IFD at byte \(ifdAt) of \(b.count)"))
        }
        let ifd = Int(ifdAt)
        let entryCount = big ? u64(ifd) : u16(ifd)
        guard entryCount <= UInt64((b.count - ifd - countSize) / entrySize) else {
            return .failure(ValidationFailure("truncated TIFF: first IFD of \(entryCount) entries incomplete"))
        }
        let entries = Int(entryCount)
        // A field's values: inline when they fit in the offset field, else
        // at an offset. Nil: they lie outside the data.
        func values(_ e: Int) -> [UInt64]? {
            let type = u16(e + 2), count = offset(e + 4)
            let width: Int
            switch type {
            case 3: width = 2
            case 4: width = 4
            case 16: width = 8
            default: return []
            }
            guard count <= UInt64(b.count / width) else { return nil }
            let n = Int(count)
            let start = n * width <= offsetSize ? UInt64(e + 4 + offsetSize) : offset(e + 4 + offsetSize)
            guard start <= UInt64(b.count), UInt64(n * width) <= UInt64(b.count) - start else { return nil }
            let s = Int(start)
            return (0..<n).map { width == 2 ? u16(s + 2 * $0) : width == 4 ? u32(s + 4 * $0) : u64(s + 8 * $0) }
        }
        var fields: [UInt64: [UInt64]] = [:]
        var extraSamples: UInt64 = 0
        for k in 0..<entries {
            let e = ifd + countSize + entrySize * k
            let tag = u16(e)
            if tag == 338 { extraSamples = offset(e + 4) }
            if [256, 257, 258, 273, 277, 278, 279, 284, 322, 323, 324, 325].contains(tag) {
                guard let v = values(e) else {
                    return .failure(ValidationFailure("truncated TIFF: field \(tag) lies outside the data"))
                }
                fields[tag] = v
            }
        }
        guard let w = fields[256]?.first, let h = fields[257]?.first else {
            return .failure(ValidationFailure("corrupt TIFF: no ImageWidth or ImageLength"))
        }
        let info = ImageInfo(format: .tiff, width: Int(w), height: Int(h), frames: 1)
        // TIFF 6.0: a photometric interpretation has 1 (grey, palette, mask),
        // 3 (RGB, YCbCr, CIELab) or 4 (CMYK) colour channels; any further
        // sample must be declared by ExtraSamples. libtiff reads any count
        // into its directory, but no decoder has a colour model for more.
        let samples = fields[277]?.first ?? 1
        if samples == 0 || samples > 4 + extraSamples {
            return .failure(ValidationFailure("corrupt TIFF: SamplesPerPixel \(samples) with \(extraSamples) extra samples"))
        }
        // The bytes of a strip: RowsPerStrip (default and at most the whole
        // height) rows of width x samples x bits; an overflow is no image.
        let bits = fields[258].map { $0.isEmpty ? 1 : $0.max()! } ?? 1
        if let rps = fields[278]?.first {
            guard rps > 0 else { return .failure(ValidationFailure("corrupt TIFF: RowsPerStrip 0")) }
            let (perRow, o1) = w.multipliedReportingOverflow(by: samples)
            let (rowBits, o2) = perRow.multipliedReportingOverflow(by: bits)
            let rows = min(rps, h)
            let (stripBits, o3) = rowBits.multipliedReportingOverflow(by: rows)
            let what = "a strip of \(rows) rows of \(w) pixels x \(samples) samples x \(bits) bits"
            if o1 || o2 || o3 {
                return .failure(ValidationFailure("corrupt TIFF: \(what) overflows 64 bits"))
            }
            // No decoder allocates more for one strip (libtiff reads a
            // strip into one buffer).
            if stripBits / 8 > 8 << 30 {
                return .failure(ValidationFailure("corrupt TIFF: \(what) is \(stripBits / 8) bytes, over 8 GiB"))
            }
        }
        // What the header cannot judge alone, libtiff decides by decoding:
        // a strip or tile whose byte count reaches past the end of the data
        // (cut short, or only overstated), one whose count is 0, and a
        // number of strips other than RowsPerStrip implies (libtiff then
        // re-estimates the strips or fails to read them).
        var doubt: (reason: String, truncated: Bool)?
        // No pixels: the pixel check says so (Limits.check), not libtiff.
        guard w > 0, h > 0 else { return .success(info) }
        for (offsetsTag, countsTag, name) in [(UInt64(273), UInt64(279), "strip"), (324, 325, "tile")] {
            guard doubt == nil, let offsets = fields[offsetsTag], let counts = fields[countsTag] else { continue }
            guard offsets.count == counts.count else {
                return .failure(ValidationFailure("corrupt TIFF: \(offsets.count) \(name) offsets for \(counts.count) byte counts"))
            }
            for (k, (o, n)) in zip(offsets, counts).enumerated() {
                let (end, over) = o.addingReportingOverflow(n)
                if over || end > UInt64(b.count) {
                    doubt = ("\(name) \(k + 1) of \(offsets.count) ends at byte \(over ? "past 2^64" : String(end)) of \(b.count)", true)
                    break
                }
                if n == 0 {
                    doubt = ("\(name) \(k + 1) of \(offsets.count) has a byte count of 0", false)
                    break
                }
            }
            if doubt == nil, name == "strip", fields[324] == nil {
                let rows = min(fields[278]?.first ?? h, h)
                let planes = fields[284]?.first == 2 ? samples : 1
                let expected = rows == 0 ? 0 : (h + rows - 1) / rows * planes
                if expected != UInt64(offsets.count) {
                    doubt = ("\(offsets.count) strips where RowsPerStrip \(fields[278]?.first ?? h) gives \(expected)", false)
                }
            }
        }
        guard let (why, truncated) = doubt else { return .success(info) }
        var r = iw_result()
        let status = iw_validate_tiff_data(b.baseAddress?.assumingMemoryBound(to: UInt8.self), b.count, maxPixels, &r)
        // IW_TOO_LARGE: not decoded; the pixel limit says so next.
        if status == Int32(IW_OK.rawValue) || status == Int32(IW_TOO_LARGE.rawValue) { return .success(info) }
        let libtiff = withUnsafeBytes(of: r.reason) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        return .failure(ValidationFailure("\(truncated ? "truncated" : "corrupt") TIFF: \(why) (libtiff: \(libtiff))"))
    }

    /// A chunk id for a reason: as text when it is plain ASCII, else as
    /// hex (damaged ids could hold control characters or newlines).
    static func printable(_ b: UnsafeRawBufferPointer, _ i: Int) -> String {
        let id = b[i..<(i + 4)]
        if id.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return "\"" + fourCC(b, i) + "\"" }
        return "0x" + Hex.encode(id)
    }

    // Readers; callers check the length first.
    static func be16(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt32 { UInt32(b[i]) << 8 | UInt32(b[i + 1]) }
    static func be32(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt32 { be16(b, i) << 16 | be16(b, i + 2) }
    static func le16(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt32 { UInt32(b[i]) | UInt32(b[i + 1]) << 8 }
    static func le24(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt32 { le16(b, i) | UInt32(b[i + 2]) << 16 }
    static func le32(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt32 { le16(b, i) | le16(b, i + 2) << 16 }
    static func fourCC(_ b: UnsafeRawBufferPointer, _ i: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: b[i..<(i + 4)]), as: UTF8.self)
    }
}

private extension String {
    var trimmingSpaces: String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}
