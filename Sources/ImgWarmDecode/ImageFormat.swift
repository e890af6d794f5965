/// The format of an image, sniffed from its first bytes, never from a file
/// name or a Content-Type. Covers every format an app on SDWebImage 5.x
/// shows: SDWebImage's own sniff (`+[NSData sd_imageFormatForImageData:]`,
/// SDWebImage/Core/NSData+ImageContentType.m), the AVIF coder's
/// (`+[SDImageAVIFCoder isAVIFFormatForData:]`, SDWebImageAVIFCoder), and
/// what reaches ImageIO through `SDImageIOCoder`, whose
/// `canDecodeFromData:` answers YES for any data (JPEG XL, ICO, ...).
///
/// An APNG is `png` with more than one frame, as SDWebImage's
/// `SDImageFormatPNG` covers both.
///
/// The raw values are the report's `format` strings. New cases go at the
/// end: `EntryResult` packs the case's position into 4 bits (15 cases).
public enum ImageFormat: String, CaseIterable, Sendable, Codable {
    case jpeg, png, gif, tiff, bmp, webp, heic, heif, pdf, svg, avif, jxl, ico
    /// Binary data with no signature known here that does not look like
    /// text either: an app may still show it (ImageIO reads more formats
    /// than any list here), so it is kept unless formats are strict.
    case unknown

    /// Formats decoded in full by this build (CodecBridge has a decoder);
    /// the others pass on their signature and header unless formats are
    /// strict.
    public var isDecodedHere: Bool { CodecBridge.decoder(for: self) != nil }

    /// Sniffs like SDWebImage's `sd_imageFormatForImageData:` (JPEG: any
    /// leading 0xFF, as there), with the stricter magic numbers that
    /// separate an image from text that happens to start with the same
    /// byte (`B`, `I`, `M`, `G`), plus the formats SDWebImage hands to
    /// ImageIO without naming them (AVIF, JPEG XL, ICO). Nil: no known
    /// signature (the caller tells text from `unknown` binary data).
    public static func sniff<C: Collection>(_ data: C) -> ImageFormat? where C.Element == UInt8, C.Index == Int {
        let n = data.count
        guard n > 0 else { return nil }
        let s = data.startIndex
        func at(_ i: Int) -> UInt8 { data[s + i] }
        func matches(_ offset: Int, _ bytes: [UInt8]) -> Bool {
            guard n >= offset + bytes.count else { return false }
            for (i, b) in bytes.enumerated() where at(offset + i) != b { return false }
            return true
        }
        func matches(_ offset: Int, _ ascii: String) -> Bool { matches(offset, Array(ascii.utf8)) }
        switch at(0) {
        case 0xFF:
            // A JPEG XL codestream starts FF 0A; SDWebImage calls it JPEG
            // and ImageIO then reads it as JPEG XL (iOS 17+). Every other
            // leading FF is JPEG to SDWebImage; libjpeg judges the rest.
            return n >= 2 && at(1) == 0x0A ? .jxl : .jpeg
        case 0x89:
            return matches(1, "PNG\r\n\u{1A}\n") ? .png : nil
        case 0x47:
            return matches(0, "GIF87a") || matches(0, "GIF89a") ? .gif : nil
        case 0x49:
            // Classic TIFF (42) and BigTIFF (43), little-endian.
            return n >= 4 && at(1) == 0x49 && (at(2) == 0x2A || at(2) == 0x2B) && at(3) == 0x00 ? .tiff : nil
        case 0x4D:
            return n >= 4 && at(1) == 0x4D && at(2) == 0x00 && (at(3) == 0x2A || at(3) == 0x2B) ? .tiff : nil
        case 0x42:
            return n >= 26 && at(1) == 0x4D ? .bmp : nil
        case 0x52:
            return matches(0, "RIFF") && matches(8, "WEBP") ? .webp : nil
        case 0x25:
            return matches(0, "%PDF") ? .pdf : nil
        case 0x3C:
            // SVG: starts with `<` and has `</svg>` in its last 100 bytes.
            let tail = Array(data.suffix(100))
            let needle = Array("</svg>".utf8)
            guard tail.count >= needle.count else { return nil }
            for i in 0...(tail.count - needle.count) where Array(tail[i..<(i + needle.count)]) == needle {
                return .svg
            }
            return nil
        case 0x00:
            // The JPEG XL container: its signature box, then `ftypjxl `.
            if matches(0, [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jxl }
            // ICO: reserved 0, type 1, at least one image (an ftyp box of
            // 256 bytes would also start 00 00 01 00).
            if n >= 6 && !matches(4, "ftyp") && at(1) == 0 && at(2) == 1 && at(3) == 0 && (at(4) != 0 || at(5) != 0) { return .ico }
        default:
            break
        }
        // ISO-BMFF: `....ftyp<major brand><minor version><compatible brands>`.
        guard n >= 12 && matches(4, "ftyp") else { return nil }
        let boxEnd = min(n, Int(UInt32(at(0)) << 24 | UInt32(at(1)) << 16 | UInt32(at(2)) << 8 | UInt32(at(3))))
        var compatible: [String] = []
        var i = 16
        while i + 4 <= boxEnd {
            compatible.append(String(decoding: data[(s + i)..<(s + i + 4)], as: UTF8.self))
            i += 4
        }
        return isoBrands(major: String(decoding: data[(s + 8)..<(s + 12)], as: UTF8.self), compatible: compatible)
    }

    /// The decoder SDWebImage hands data of no signature known here to:
    /// `.png` or `.gif` when its own sniff names that format, so its
    /// `SDImageAPNGCoder` or `SDImageGIFCoder` decodes it (they answer
    /// `canDecodeFromData:` by that sniff alone, and the coders manager asks
    /// them before `SDImageIOCoder`); nil when the data goes to
    /// `SDImageIOCoder`, where ImageIO itself decides from the content (it
    /// reads camera RAW files starting `II` or `MM`, say), or to no coder.
    /// Data SDWebImage sends to its PNG or GIF coder must pass that decoder
    /// here: `89 50 4E 47` and a damaged rest is PNG to the app, which shows
    /// nothing, not an unknown format to keep.
    static func sdWebImageDecoder<C: Collection>(_ data: C) -> ImageFormat? where C.Element == UInt8, C.Index == Int {
        switch SDWebImageFormat.sniff(data) {
        case .png: return .png
        case .gif: return .gif
        default: return nil
        }
    }

    /// The format of an ISO-BMFF file from its `ftyp` brands (ISO/IEC
    /// 23008-12 and the AV1 Image File Format), or nil for brands of no
    /// image format (an MP4 video, say).
    ///
    /// The major brand decides first, as SDWebImage's sniff does
    /// (`heic heix hevc hevx` HEIC, `mif1 msf1` HEIF) and the AVIF coder's
    /// (`avif avis`); libheif's `heif_brand` list adds the multiview and
    /// scalable HEVC brands. A structural major brand (`mif1`, `msf1`,
    /// `mif2`, `miaf`) is then refined by the compatible brands, since
    /// the codec inside decides which decoder reads it: a `mif1` file
    /// listing `avif` is AV1-coded.
    static func isoBrands(major: String, compatible: [String]) -> ImageFormat? {
        let avif: Set<String> = ["avif", "avis"]
        let heic: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"]
        let structural: Set<String> = ["mif1", "msf1", "mif2", "miaf"]
        if avif.contains(major) { return .avif }
        if heic.contains(major) { return .heic }
        if structural.contains(major) || compatible.contains(where: structural.contains) {
            if compatible.contains(where: avif.contains) { return .avif }
            if compatible.contains(where: heic.contains) { return .heic }
            return .heif
        }
        if compatible.contains(where: avif.contains) { return .avif }
        if compatible.contains(where: heic.contains) { return .heic }
        return nil
    }
}

/// `SDImageFormat` as `+[NSData sd_imageFormatForImageData:]` gives it
/// (SDWebImage 5.x, SDWebImage/Core/NSData+ImageContentType.m, lines
/// 22-88), byte for byte: mostly the first byte alone. `sniff` above is
/// stricter where this one would call text an image; this one says which
/// of SDWebImage's coders data goes to (`ImageFormat.sdWebImageDecoder`).
enum SDWebImageFormat: Equatable {
    case undefined, jpeg, png, gif, tiff, bmp, webp, heic, heif, pdf, svg

    static func sniff<C: Collection>(_ data: C) -> SDWebImageFormat where C.Element == UInt8, C.Index == Int {
        // `[data getBytes:&c length:1]` on empty data leaves c
        // uninitialised; imgwarm refuses an empty body before this.
        guard let c = data.first else { return .undefined }
        let bytes = Array(data.prefix(12))
        func ascii(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        switch c {
        case 0xFF: return .jpeg
        case 0x89: return .png
        case 0x47: return .gif
        case 0x49, 0x4D: return .tiff
        case 0x42: return .bmp
        case 0x52:
            // `[testString hasPrefix:@"RIFF"] && [testString hasSuffix:@"WEBP"]` on 12 bytes.
            if data.count >= 12 && ascii(0..<4) == "RIFF" && ascii(8..<12) == "WEBP" { return .webp }
        case 0x00:
            if data.count >= 12 {
                switch ascii(4..<12) {
                case "ftypheic", "ftypheix", "ftyphevc", "ftyphevx": return .heic
                case "ftypmif1", "ftypmsf1": return .heif
                default: break
                }
            }
        case 0x25:
            if data.count >= 4 && ascii(1..<4) == "PDF" { return .pdf }
        case 0x3C:
            // `</svg>` within the last 100 bytes.
            let tail = Array(data.suffix(100)), tag = Array("</svg>".utf8)
            if tail.count >= tag.count, (0...(tail.count - tag.count)).contains(where: { Array(tail[$0..<($0 + tag.count)]) == tag }) {
                return .svg
            }
        default: break
        }
        return .undefined
    }
}
