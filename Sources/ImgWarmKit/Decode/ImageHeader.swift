/// Dimensions read from the first bytes of an image, without decoding:
/// used when decoding is off (`--no-validate`) and for the formats this
/// build does not decode (WebP, BMP).
public enum ImageHeader {
    /// What the header says, or a failure when the header itself shows the
    /// data is unusable (a truncated WebP, a BMP header of unknown size).
    /// Nil dimensions mean the header does not give them cheaply.
    public static func read(_ format: ImageFormat, _ b: UnsafeRawBufferPointer) -> Result<ImageInfo, ValidationFailure> {
        switch format {
        case .png: return .success(png(b))
        case .gif: return .success(gif(b))
        case .jpeg: return .success(jpeg(b))
        case .webp: return webp(b)
        case .bmp: return bmp(b)
        case .tiff, .heic, .heif, .pdf, .svg: return .success(ImageInfo(format: format))
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

    /// Walks the markers up to the first SOFn (stops at SOS: no frame
    /// header before the scan data means none is coming).
    static func jpeg(_ b: UnsafeRawBufferPointer) -> ImageInfo {
        var i = 2
        while i + 4 <= b.count {
            guard b[i] == 0xFF else { break }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }  // fill byte
            if marker == 0x01 || (0xD0...0xD8).contains(marker) { i += 2; continue }  // no length
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int(be16(b, i + 2))
            let isFrame = (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
            if isFrame {
                guard i + 9 <= b.count else { break }
                return ImageInfo(format: .jpeg, width: Int(be16(b, i + 7)), height: Int(be16(b, i + 5)), frames: 1)
            }
            guard length >= 2 else { break }
            i += 2 + length
        }
        return ImageInfo(format: .jpeg)
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
    static func bmp(_ b: UnsafeRawBufferPointer) -> Result<ImageInfo, ValidationFailure> {
        guard b.count >= 26 else { return .failure(ValidationFailure("truncated BMP: header incomplete")) }
        let headerSize = le32(b, 14)
        if headerSize == 12 {
            return .success(ImageInfo(format: .bmp, width: Int(le16(b, 18)), height: Int(le16(b, 20)), frames: 1))
        }
        guard headerSize >= 40 else {
            return .failure(ValidationFailure("corrupt BMP: unknown DIB header size \(headerSize)"))
        }
        let width = Int(Int32(bitPattern: le32(b, 18)))
        let height = Int(Int32(bitPattern: le32(b, 22)))
        guard width >= 0 else { return .failure(ValidationFailure("corrupt BMP: negative width \(width)")) }
        return .success(ImageInfo(format: .bmp, width: width, height: abs(height), frames: 1))
    }

    /// A chunk id for a reason: as text when it is plain ASCII, else as
    /// hex (damaged ids could hold control characters or newlines).
    static func printable(_ b: UnsafeRawBufferPointer, _ i: Int) -> String {
        let id = b[i..<(i + 4)]
        if id.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return "\"" + fourCC(b, i) + "\"" }
        return "0x" + id.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
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
