import CImageCodecs
import ImgWarmSupport

/// The memory the decoder of CImageCodecs holds at its peak for one image,
/// estimated from the image's header before decoding (`--decode-memory`).
///
/// Each figure follows what the validator of the format allocates, and
/// was checked against the peak RSS of decoding generated images of
/// several sizes (every estimate at or above the measured peak; the table
/// is in docs/validation.md, "Decode memory"):
/// - JPEG of several scans (progressive, or sequential with one scan per
///   component): libjpeg keeps every DCT coefficient of the image until
///   the last scan (jdcoefct.c, jinit_d_coef_controller: one virtual array
///   per component of width_in_blocks x height_in_blocks blocks, each
///   rounded up to the sampling factor, 64 coefficients of 2 bytes a
///   block). That is 2 bytes a pixel for each full-resolution component:
///   a 9999x9999 4:4:4 image holds 572 MiB. One scan (baseline): a few
///   rows at an eighth of the size (jpeg_validate.c decodes at 1/8).
/// - PNG and APNG: the image data of a frame up to 32 MiB is inflated whole
///   (png_validate.c, iw_fast_inflate), next to a copy of the compressed
///   stream when it is split over several chunks; larger data is inflated
///   row by row.
/// - WebP: lossless (VP8L) keeps the frame as 4 bytes a pixel; a lossy
///   frame's alpha plane is a byte a pixel, and a lossless-coded alpha
///   plane is decoded as VP8L first; lossy colour needs macroblock rows.
/// - GIF: giflib's state and the LZW table; no pixels are produced.
/// - AVIF, HEIF and JPEG XL: the codecs decode whole frames into planes of
///   up to 16 bits a sample (with their reference frames and borders); the
///   factors are the measured peaks per pixel, rounded up, for the deepest
///   case (alpha, high bit depth).
public enum DecodeMemory {
    /// What any image costs the decoder whatever its size: the library's
    /// structures and tables (measured: 20 to 200 KiB).
    static let base = UInt64(IW_DECODE_MEMORY_BASE)

    /// Bytes the decoder is expected to hold at its peak for `bytes` of
    /// `format`. An image over `maxPixels` costs only `base`: its
    /// validator refuses it from the header, before any allocation.
    public static func estimate(_ format: ImageFormat, _ bytes: UnsafeRawBufferPointer, maxPixels: UInt64) -> UInt64 {
        // libavif parses every item before it knows a size: charged whatever the size.
        let parse = format == .avif ? avifItems(bytes) : 0
        return parse.addingReportingOverflow(pixelsEstimate(format, bytes, maxPixels: maxPixels)).partialValue
    }

    /// What libavif 0.11's parse holds for the items and extents of `meta`
    /// (iw_bmff_item_counts), past what `base` already covers (64 items:
    /// every file encoders write), so that an ordinary file costs no more.
    static func avifItems(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var items: UInt64 = 0, extents: UInt64 = 0
        iw_bmff_item_counts(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &items, &extents)
        let held = items * UInt64(IW_AVIF_ITEM_MEMORY) + extents * UInt64(IW_AVIF_EXTENT_MEMORY)
        return held > base ? held - base : 0
    }

    static func pixelsEstimate(_ format: ImageFormat, _ bytes: UnsafeRawBufferPointer, maxPixels: UInt64) -> UInt64 {
        let header = ImageHeader.read(format, bytes)
        if case .success(let info) = header, let w = info.width, let h = info.height {
            let pixels = UInt64(w).multipliedReportingOverflow(by: UInt64(h))
            if pixels.overflow || pixels.partialValue > maxPixels { return base }
        }
        switch format {
        case .jpeg: return base + jpeg(bytes)
        case .png: return base + png(bytes)
        case .gif: return base
        case .webp: return base + webp(bytes)
        case .avif, .heic, .heif:
            // The largest size written anywhere the decoders read one (ispe,
            // the tracks, the HEVC parameter sets, a grid's output and
            // tiles): an ispe alone may understate what is decoded.
            let data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
            var w: UInt32 = 0, h: UInt32 = 0
            iw_bmff_largest_coded_size(data, bytes.count, &w, &h)
            let pixels = UInt64(w) * UInt64(h)
            if pixels > maxPixels { return base }
            let facts = ContainerFacts(bytes)
            return planes(format, pixels: pixels, facts) + (format == .avif ? gridTiles(data, bytes.count, facts) : 0)
        case .jxl:
            // A container cut short still has its size header: libjxl reads
            // it (and allocates for it) before it finds the data missing.
            guard let size = jxlSize(bytes) else { return base }
            let pixels = UInt64(size.width) * UInt64(size.height)
            if pixels > maxPixels { return base }
            return planes(format, pixels: pixels, ContainerFacts(bytes))
        case .bmp, .ico, .tiff, .pdf, .svg, .unknown:
            // Not decoded here: the header is all that is read.
            return 0
        }
    }

    /// The formats decoded to whole planes: the formula the C validators
    /// re-check the decoder's own size with (iw_planes_memory, with the
    /// measured figures), `base` included.
    static func planes(_ format: ImageFormat, pixels: UInt64, _ facts: ContainerFacts) -> UInt64 {
        let codec: iw_codec_library = format == .avif ? IW_CODEC_AVIF : format == .jxl ? IW_CODEC_JXL : IW_CODEC_HEIF
        return iw_planes_memory(codec, pixels, facts.alpha ? 1 : 0, facts.deep ? 1 : 0)
    }

    /// libavif's decoders of a grid's tiles, one a tile (and one a tile
    /// of its alpha grid), alive together (iw_bmff_grid_tiles).
    static func gridTiles(_ data: UnsafePointer<UInt8>?, _ count: Int, _ facts: ContainerFacts) -> UInt64 {
        UInt64(iw_bmff_grid_tiles(data, count)) * UInt64(IW_AVIF_TILE_MEMORY) * (facts.alpha ? 2 : 1)
    }

    /// The SizeHeader of a bare codestream, or of the first `jxlc` or
    /// `jxlp` box of a container, whole or cut short.
    static func jxlSize(_ b: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        if b.count >= 2 && b[0] == 0xFF && b[1] == 0x0A { return ContainerHeaders.jxlSize(b) }
        let base = b.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var box = iw_box()
        var i = 0
        while true {
            let r = iw_box_status(rawValue: iw_bmff_box_at(base, b.count, i, &box))
            guard r == IW_BOX_OK || r == IW_BOX_PAST_END else { return nil }
            let type = withUnsafeBytes(of: box.type) { String(decoding: $0, as: UTF8.self) }
            let start = Int(box.payload) + (type == "jxlp" ? 4 : 0)
            if (type == "jxlc" || type == "jxlp"), start < b.count {
                return ContainerHeaders.jxlSize(UnsafeRawBufferPointer(rebasing: b[start...]))
            }
            guard r == IW_BOX_OK else { return nil }
            i = Int(box.end)
        }
    }

    /// What the ISO-BMFF items' properties say of the planes, found by
    /// their box types in the first 64 KiB (where `meta` sits in the files
    /// encoders write): an auxiliary (alpha) image, samples over 8 bits.
    struct ContainerFacts {
        var alpha = false
        var deep = false

        init(_ b: UnsafeRawBufferPointer) {
            let end = min(b.count, 64 << 10)
            var i = 4
            while i + 4 <= end {
                if b[i] == 0x61, b[i + 1] == 0x75, b[i + 2] == 0x78, b[i + 3] == 0x43 { alpha = true }  // auxC
                // pixi: version and flags, channel count, then bits per channel.
                if b[i] == 0x70, b[i + 1] == 0x69, b[i + 2] == 0x78, b[i + 3] == 0x69, i + 9 < end,
                   b[i + 9] > 8 { deep = true }
                i += 1
            }
        }
    }

    /// The frame header of a JPEG: what the coefficient buffers depend on.
    struct JPEGFrame: Equatable {
        var width: Int
        var height: Int
        /// (horizontal, vertical) sampling factor of each component.
        var sampling: [(Int, Int)]
        var progressive: Bool
        /// Components in the first scan: fewer than the frame's means one
        /// scan per component (sequential, not interleaved), also buffered
        /// whole.
        var firstScanComponents: Int?

        static func == (a: JPEGFrame, b: JPEGFrame) -> Bool {
            a.width == b.width && a.height == b.height && a.progressive == b.progressive
                && a.firstScanComponents == b.firstScanComponents
                && a.sampling.map { [$0.0, $0.1] } == b.sampling.map { [$0.0, $0.1] }
        }

        /// libjpeg's jpeg_has_multiple_scans.
        var multipleScans: Bool {
            progressive || (firstScanComponents.map { $0 < sampling.count } ?? false)
        }

        /// The whole-image coefficient buffers (jdinput.c initial_setup
        /// for the block counts, jdcoefct.c for the rounding): 128 bytes a
        /// block.
        var coefficientBytes: UInt64 {
            let maxH = sampling.map(\.0).max() ?? 1, maxV = sampling.map(\.1).max() ?? 1
            var total: UInt64 = 0
            for (h, v) in sampling {
                let widthInBlocks = ceilDiv(width * h, maxH * 8), heightInBlocks = ceilDiv(height * v, maxV * 8)
                total += UInt64(roundUp(widthInBlocks, h)) * UInt64(roundUp(heightInBlocks, v)) * 128
            }
            return total
        }

        /// One scan: rows at 1/8 scale and a row of MCUs of the input
        /// (measured: under 200 KiB at 3000 pixels wide).
        var rowBytes: UInt64 {
            let maxV = sampling.map(\.1).max() ?? 1
            return UInt64(width) * UInt64(sampling.count) * UInt64(maxV) * 8
        }
    }

    static func jpeg(_ b: UnsafeRawBufferPointer) -> UInt64 {
        guard let frame = jpegFrame(b) else { return 0 }
        return frame.multipleScans ? frame.coefficientBytes + frame.rowBytes : frame.rowBytes
    }

    /// The frame header (SOFn) and the first scan's component count, by
    /// the marker walk `ImageHeader` shares (JPEGMarkers). Nil without a
    /// usable SOF.
    static func jpegFrame(_ b: UnsafeRawBufferPointer) -> JPEGFrame? {
        var frame: JPEGFrame?
        var unusable = false
        JPEGMarkers.walk(b) { segment in
            let p = segment.payload.lowerBound, n = segment.payload.count
            if segment.marker == 0xDA {
                if n >= 1 { frame?.firstScanComponents = Int(b[p]) }
                return false
            }
            guard JPEGMarkers.isFrameHeader(segment.marker), frame == nil else { return true }
            // Precision, height, width, component count, then 3 bytes a component.
            guard n >= 6 else { unusable = true; return false }
            let count = Int(b[p + 5])
            guard count > 0, 6 + 3 * count <= n else { unusable = true; return false }
            var sampling: [(Int, Int)] = []
            for c in 0..<count {
                let factors = b[p + 6 + 3 * c + 1]
                // 0 is invalid (libjpeg refuses it); 1 keeps the sums sane.
                sampling.append((max(1, Int(factors >> 4)), max(1, Int(factors & 0x0F))))
            }
            // SOF2, SOF6 (Huffman), SOF10, SOF14 (arithmetic): progressive.
            let progressive = [0xC2, 0xC6, 0xCA, 0xCE].contains(segment.marker)
            frame = JPEGFrame(width: Int(be16(b, p + 3)), height: Int(be16(b, p + 1)), sampling: sampling,
                              progressive: progressive, firstScanComponents: nil)
            return true
        }
        return unusable ? nil : frame
    }

    /// Largest image data inflated in one piece (png_validate.c,
    /// IW_PNG_FAST_MAX_BYTES).
    static let pngWholeInflateLimit: UInt64 = 32 << 20

    /// IHDR: the filtered image data of the canvas (every frame of an
    /// APNG fits in it), inflated whole up to the limit, next to the
    /// compressed data copied out of its chunks (counted as the file: the
    /// chunks are most of it; twice while the copy grows); else two rows.
    static func png(_ b: UnsafeRawBufferPointer) -> UInt64 {
        guard b.count >= 29, b[12] == 0x49, b[13] == 0x48, b[14] == 0x44, b[15] == 0x52 else { return 0 }
        let width = UInt64(be32(b, 16)), height = UInt64(be32(b, 20))
        let depth = UInt64(b[24]), colourType = b[25], interlaced = b[28] == 1
        let channels: UInt64
        switch colourType {
        case 0, 3: channels = 1
        case 2: channels = 3
        case 4: channels = 2
        default: channels = 4
        }
        let rowBytes = (width * channels * depth + 7) / 8
        // A filter byte a row; an interlaced image has up to 7 passes, each
        // with its own rows (at most 15 more bytes a row, in total).
        let filtered = (rowBytes + 1) * height + (interlaced ? 15 * height : 0)
        let data = UInt64(b.count)
        let profile = pngProfile(b)
        // Larger data goes to zlib row by row, straight from the chunks.
        guard filtered <= pngWholeInflateLimit else { return 2 * (rowBytes + 1) + (64 << 10) + profile }
        return data + max(data, filtered) + profile
    }

    /// libpng's limit on an ancillary chunk's allocation
    /// (png_validate.c, IW_PNG_CHUNK_MALLOC_MAX).
    static let pngChunkMallocMax: UInt64 = 8 << 20

    /// An iCCP profile before the image data: libpng inflates it into its
    /// read buffer and copies it into the info struct, twice its size, up
    /// to the chunk limit; deflate inflates at most 1032 bytes a byte.
    /// Text is skipped (never inflated), other ancillary chunks are kept
    /// at their size (counted as the file's).
    static func pngProfile(_ b: UnsafeRawBufferPointer) -> UInt64 {
        var i = 8
        while i + 8 <= b.count {
            let length = UInt64(be32(b, i))
            if b[i + 4] == 0x49, b[i + 5] == 0x44, b[i + 6] == 0x41, b[i + 7] == 0x54 { return 0 }  // IDAT
            if b[i + 4] == 0x69, b[i + 5] == 0x43, b[i + 6] == 0x43, b[i + 7] == 0x50 {  // iCCP
                return 2 * min(pngChunkMallocMax, length * 1032)
            }
            guard length <= UInt64(b.count) else { return 0 }
            i += 12 + Int(length)
        }
        return 0
    }

    /// VP8 (lossy), VP8L (lossless) or VP8X (extended: the canvas, and the
    /// frames within it, of either kind, told by the chunks it holds).
    static func webp(_ b: UnsafeRawBufferPointer) -> UInt64 {
        guard case .success(let info) = ImageHeader.read(.webp, b), let w = info.width, let h = info.height else { return 0 }
        let pixels = UInt64(w) * UInt64(h)
        // Macroblock rows of the lossy decoder and the output at 1/8 scale.
        let rows = UInt64(w) * 128 + pixels / 8
        let kinds = webpBitstreams(b)
        // A lossless frame is 4 bytes a pixel (and its transforms' rows);
        // an alpha plane a byte, plus 4 while its lossless coding is
        // decoded.
        if kinds.alpha { return rows + 6 * pixels }
        if kinds.lossless { return rows + 5 * pixels }
        return rows
    }

    /// Whether any frame is lossless (VP8L) or has an alpha plane (ALPH):
    /// the chunk headers, and those inside each ANMF frame, are read, no
    /// payload.
    static func webpBitstreams(_ b: UnsafeRawBufferPointer) -> (lossless: Bool, alpha: Bool) {
        var lossless = false, alpha = false
        func walk(_ start: Int, _ end: Int) {
            var i = start
            while i + 8 <= end {
                let id = String(decoding: UnsafeRawBufferPointer(rebasing: b[i..<(i + 4)]), as: UTF8.self)
                let size = Int(UInt32(b[i + 4]) | UInt32(b[i + 5]) << 8 | UInt32(b[i + 6]) << 16 | UInt32(b[i + 7]) << 24)
                let next = i + 8 + size + (size & 1)
                if id == "VP8L" { lossless = true }
                if id == "ALPH" { alpha = true }
                // The frame's 16-byte header, then its image chunks.
                if id == "ANMF" { walk(i + 8 + 16, min(next, end)) }
                if next <= i { return }
                i = next
            }
        }
        walk(12, b.count)
        return (lossless, alpha)
    }

    /// The one-line reason of an image over the whole budget.
    public static func overBudget(_ format: ImageFormat, _ bytes: UnsafeRawBufferPointer, estimate: UInt64,
                                  limit: UInt64) -> ValidationFailure {
        var what = format.displayName
        var size: (Int, Int)?
        if case .success(let info) = ImageHeader.read(format, bytes), let w = info.width, let h = info.height {
            size = (w, h)
        }
        if [.avif, .heic, .heif].contains(format) {
            // The size it was charged at, when an ispe understates it.
            var w: UInt32 = 0, h: UInt32 = 0
            iw_bmff_largest_coded_size(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &w, &h)
            if w > 0, UInt64(w) * UInt64(h) > UInt64(size.map { $0.0 * $0.1 } ?? 0) { size = (Int(w), Int(h)) }
        }
        if let (w, h) = size { what += " \(w)x\(h)" }
        return ValidationFailure(
            "\(what) needs an estimated \(Units.formatBytes(estimate)) to decode, more than the decode memory budget of \(Units.formatBytes(limit)) (--decode-memory)",
            kind: .overDecodeMemory)
    }

    private static func be16(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt16 {
        UInt16(b[i]) << 8 | UInt16(b[i + 1])
    }

    private static func be32(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }
}

private func ceilDiv(_ a: Int, _ b: Int) -> Int { (a + b - 1) / b }
private func roundUp(_ a: Int, _ b: Int) -> Int { ceilDiv(a, b) * b }
