import CImageCodecs

/// Header facts of the ISO-BMFF formats (AVIF, HEIC/HEIF, the JPEG XL
/// container) and of the JPEG XL codestream, read without a decoder: the
/// size, so `--max-pixels` applies before any decoding, and whether every
/// top-level box lies inside the data, so a file cut short between boxes
/// is seen even where no decoder runs. Written by hand because neither
/// libheif nor libavif exposes a header-only read without building a
/// whole decoder context, and the box walk is a few lines.
enum ContainerHeaders {
    /// AVIF and HEIC/HEIF: the top-level boxes must all end inside the
    /// data; the size is the largest `ispe` (image spatial extents) under
    /// `meta/iprp/ipco`, which is the primary image's (a grid's full size;
    /// tiles, thumbnails and alpha planes are never larger). One frame when
    /// no `moov` box holds a sequence's track; a sequence's frames are left
    /// to its decoder.
    static func iso(_ format: ImageFormat, _ b: UnsafeRawBufferPointer) -> Result<ImageInfo, ValidationFailure> {
        let name = format.displayName
        var width: Int?, height: Int?
        var sequence = false
        let walked = walkBoxes(b, 0, b.count) { type, start, end in
            if type == "moov" { sequence = true }
            guard type == "meta", end - start >= 4 else { return }
            // meta is a full box: version and flags first.
            _ = walkBoxes(b, start + 4, end) { type, start, end in
                guard type == "iprp" else { return }
                _ = walkBoxes(b, start, end) { type, start, end in
                    guard type == "ipco" else { return }
                    _ = walkBoxes(b, start, end) { type, start, end in
                        guard type == "ispe", end - start >= 12 else { return }
                        let w = Int(ImageHeader.be32(b, start + 4)), h = Int(ImageHeader.be32(b, start + 8))
                        if Double(w) * Double(h) > Double(width ?? 0) * Double(height ?? 0) { width = w; height = h }
                    }
                }
            }
        }
        if case .failure(let cut) = walked { return .failure(cut.failure(name)) }
        return .success(ImageInfo(format: format, width: width, height: height, frames: sequence ? nil : 1))
    }

    /// JPEG XL: the codestream's SizeHeader, found at the start of a bare
    /// codestream or in the container's `jxlc` box (or first `jxlp` box,
    /// after its 4-byte index). A container's boxes must end inside the data.
    static func jxl(_ b: UnsafeRawBufferPointer) -> Result<ImageInfo, ValidationFailure> {
        var codestream: Range<Int>?
        if b.count >= 2 && b[0] == 0xFF && b[1] == 0x0A {
            codestream = 0..<b.count
        } else {
            let walked = walkBoxes(b, 0, b.count) { type, start, end in
                guard codestream == nil else { return }
                if type == "jxlc" { codestream = start..<end }
                if type == "jxlp" && end - start > 4 { codestream = (start + 4)..<end }
            }
            if case .failure(let cut) = walked { return .failure(cut.failure("JPEG XL")) }
        }
        guard let range = codestream else {
            return .failure(ValidationFailure("corrupt JPEG XL: the container holds no codestream"))
        }
        guard let size = jxlSize(UnsafeRawBufferPointer(rebasing: b[range])) else {
            return .failure(ValidationFailure("truncated JPEG XL: size header incomplete"))
        }
        return .success(ImageInfo(format: .jxl, width: size.width, height: size.height))
    }

    /// ISO/IEC 18181-1 SizeHeader after the FF 0A signature: bits are read
    /// least significant first; sides are 8 x (1 + u(5)) when `div8`, else
    /// a U32 with 9, 13, 18 or 30 bits; the width may come from a ratio of
    /// the height.
    static func jxlSize(_ b: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        guard b.count >= 2, b[0] == 0xFF, b[1] == 0x0A else { return nil }
        var bit = 16
        func read(_ n: Int) -> Int? {
            guard bit + n <= b.count * 8 else { return nil }
            var v = 0
            for k in 0..<n {
                let i = bit + k
                v |= Int((b[i >> 3] >> (i & 7)) & 1) << k
            }
            bit += n
            return v
        }
        func side(_ div8: Bool) -> Int? {
            if div8 { return read(5).map { 8 * ($0 + 1) } }
            guard let selector = read(2) else { return nil }
            return read([9, 13, 18, 30][selector]).map { $0 + 1 }
        }
        guard let div8 = read(1).map({ $0 == 1 }), let height = side(div8), let ratio = read(3) else { return nil }
        let ratios = [(1, 1), (12, 10), (4, 3), (3, 2), (16, 9), (5, 4), (2, 1)]
        if ratio > 0 {
            let (num, den) = ratios[ratio - 1]
            return (height * num / den, height)
        }
        guard let width = side(div8) else { return nil }
        return (width, height)
    }

    /// Calls `body(type, payloadStart, end)` for each box in `start..<end`;
    /// fails with a reason when a box claims more bytes than there are.
    /// A size of 0 means "to the end", 1 a 64-bit size after the type.
    /// The box headers are read by the C walk the validators use
    /// (iw_bmff_box_at): one reading of sizes for the estimate, the header
    /// and the decoders' re-checks.
    static func walkBoxes(_ b: UnsafeRawBufferPointer, _ start: Int, _ end: Int,
                          _ body: (String, Int, Int) -> Void) -> Result<Void, BoxCut> {
        let base = b.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var i = start
        var box = iw_box()
        while true {
            let r = iw_box_status(rawValue: iw_bmff_box_at(base, end, i, &box))
            let type = withUnsafeBytes(of: box.type) { String(decoding: $0, as: UTF8.self) }
            switch r {
            case IW_BOX_OK:
                body(type, Int(box.payload), Int(box.end))
                i = Int(box.end)
            case IW_BOX_END:
                return .success(())
            case IW_BOX_HEADER_CUT:
                return .failure(BoxCut("a box header cut short at byte \(i) of \(end)", truncated: true))
            case IW_BOX_LARGESIZE_CUT:
                return .failure(BoxCut("box \(type) cut short at byte \(i) of \(end)", truncated: true))
            case IW_BOX_TOO_SMALL:
                return .failure(BoxCut("box \(type) has a size of \(box.size)", truncated: false))
            default:
                let boxEnd = box.size > UInt64(Int.max / 2) ? "past 2^62" : String(UInt64(i) + box.size)
                return .failure(BoxCut("box \(type) ends at byte \(boxEnd) of \(end)", truncated: true))
            }
        }
    }

    /// Why a box walk stopped: data cut short, or a box that cannot be.
    struct BoxCut: Error, CustomStringConvertible {
        var description: String
        var truncated: Bool
        init(_ d: String, truncated: Bool) {
            description = d
            self.truncated = truncated
        }
        func failure(_ name: String) -> ValidationFailure {
            ValidationFailure("\(truncated ? "truncated" : "corrupt") \(name): \(description)")
        }
    }
}
