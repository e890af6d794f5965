/// `NSData+ImageContentType`: the format SDWebImage infers from the first
/// bytes of the data, never from a file name or a Content-Type.
public enum ImageFormat: String, CaseIterable, Sendable, Codable {
    case jpeg, png, gif, tiff, bmp, webp, heic, heif, pdf, svg

    /// Formats this build decodes fully (libjpeg-turbo, libpng, giflib);
    /// the others pass on their signature unless formats are strict.
    public var isDecodedHere: Bool { self == .jpeg || self == .png || self == .gif }

    /// Sniffs like SDWebImage's `sd_imageFormatForImageData:`, with the
    /// stricter magic numbers that separate an image from text that happens
    /// to start with the same byte (`B`, `I`, `M`, `G`).
    public static func sniff<C: Collection>(_ data: C) -> ImageFormat? where C.Element == UInt8, C.Index == Int {
        let n = data.count
        guard n > 0 else { return nil }
        let s = data.startIndex
        func at(_ i: Int) -> UInt8 { data[s + i] }
        func matches(_ offset: Int, _ ascii: String) -> Bool {
            let bytes = Array(ascii.utf8)
            guard n >= offset + bytes.count else { return false }
            for (i, b) in bytes.enumerated() where at(offset + i) != b { return false }
            return true
        }
        switch at(0) {
        case 0xFF:
            return n >= 3 && at(1) == 0xD8 && at(2) == 0xFF ? .jpeg : nil
        case 0x89:
            return matches(1, "PNG\r\n\u{1A}\n") ? .png : nil
        case 0x47:
            return matches(0, "GIF87a") || matches(0, "GIF89a") ? .gif : nil
        case 0x49:
            return n >= 4 && at(1) == 0x49 && at(2) == 0x2A && at(3) == 0x00 ? .tiff : nil
        case 0x4D:
            return n >= 4 && at(1) == 0x4D && at(2) == 0x00 && at(3) == 0x2A ? .tiff : nil
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
        default:
            break
        }
        // ISO-BMFF: `....ftyp<brand>`
        if n >= 12 && matches(4, "ftyp") {
            let brand = String(decoding: data[(s + 8)..<(s + 12)], as: UTF8.self)
            switch brand {
            case "heic", "heix", "hevc", "hevx": return .heic
            case "mif1", "msf1": return .heif
            default: return nil
            }
        }
        return nil
    }
}
