import CImageFixtures
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// Images made by the test-only encoders of CImageFixtures, plus the byte
/// surgery the tests need (PNG chunks with valid CRCs, JPEG markers).
enum Fixture {
    static func take(_ encode: (UnsafeMutablePointer<iwf_buffer>) -> Int32) -> [UInt8] {
        var buffer = iwf_buffer()
        let rc = encode(&buffer)
        precondition(rc == 0 && buffer.data != nil, "fixture encoder failed")
        defer { iwf_free(&buffer) }
        return Array(UnsafeBufferPointer(start: buffer.data, count: buffer.len))
    }

    enum PNGColor: Int32 { case gray = 0, rgb = 2, palette = 3, grayAlpha = 4, rgba = 6 }

    static func png(_ width: UInt32, _ height: UInt32, _ color: PNGColor = .rgb, depth: Int32 = 8,
                    interlaced: Bool = false, trns: Bool = false, seed: UInt32 = 0) -> [UInt8] {
        take { iwf_png(width, height, color.rawValue, depth, interlaced ? 1 : 0, trns ? 1 : 0, seed, $0) }
    }

    static func apng(_ width: UInt32, _ height: UInt32, frames: UInt32) -> [UInt8] {
        take { iwf_apng(width, height, frames, $0) }
    }

    static func jpeg(_ width: UInt32, _ height: UInt32, _ kind: iwf_jpeg_kind = IWF_JPEG_BASELINE,
                     quality: Int32 = 85, markers: Bool = false, seed: UInt32 = 0) -> [UInt8] {
        take { iwf_jpeg(width, height, Int32(kind.rawValue), quality, markers ? 1 : 0, seed, $0) }
    }

    static func gif(_ width: UInt32, _ height: UInt32, frames: UInt32 = 1, lastOutside: Bool = false) -> [UInt8] {
        take { iwf_gif(width, height, frames, lastOutside ? 1 : 0, $0) }
    }

    static func webp(_ width: UInt32, _ height: UInt32, lossless: Bool = false, alpha: Bool = false, seed: UInt32 = 0) -> [UInt8] {
        take { iwf_webp(width, height, lossless ? 1 : 0, alpha ? 1 : 0, seed, $0) }
    }

    static func webpAnimated(_ width: UInt32, _ height: UInt32, frames: UInt32, lossless: Bool = false) -> [UInt8] {
        take { iwf_webp_animated(width, height, frames, lossless ? 1 : 0, $0) }
    }

    /// The RIFF chunks of a WebP as (id, header offset, payload size).
    static func riffChunks(_ webp: [UInt8], from start: Int = 12, to end: Int? = nil) -> [(id: String, at: Int, size: Int)] {
        var chunks: [(String, Int, Int)] = []
        var i = start
        let end = end ?? webp.count
        while i + 8 <= end {
            let size = Int(webp[i + 4]) | Int(webp[i + 5]) << 8 | Int(webp[i + 6]) << 16 | Int(webp[i + 7]) << 24
            chunks.append((String(decoding: webp[i..<(i + 4)], as: UTF8.self), i, size))
            i += 8 + size + (size & 1)
        }
        return chunks
    }

    /// A WebP cut to `length` bytes whose container sizes were patched to
    /// match the cut: the RIFF size, the size of the chunk the cut falls in,
    /// and (inside an ANMF frame) the size of the frame's bitstream chunk.
    /// Only the bitstream itself then shows the damage.
    static func webpCutWithSizesPatched(_ webp: [UInt8], to length: Int) -> [UInt8] {
        var b = Array(webp.prefix(length))
        Handmade.putLE32(&b, 4, UInt32(b.count - 8))
        func fit(from start: Int) {
            for chunk in riffChunks(b, from: start) where chunk.at + 8 + chunk.size > b.count {
                Handmade.putLE32(&b, chunk.at + 4, UInt32(b.count - chunk.at - 8))
                // An ANMF payload: 16 bytes of frame header, then chunks.
                if chunk.id == "ANMF" { fit(from: chunk.at + 8 + 16) }
            }
        }
        fit(from: 12)
        return b
    }

    static func crc32<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        let array = Array(bytes)
        return array.withUnsafeBufferPointer { iwf_crc32($0.baseAddress, $0.count) }
    }

    /// A PNG chunk: where its length field starts, its type and data length.
    struct Chunk { var offset: Int; var type: String; var length: Int
        var dataStart: Int { offset + 8 }
    }

    static func chunks(_ png: [UInt8]) -> [Chunk] {
        var result: [Chunk] = []
        var i = 8
        while i + 12 <= png.count {
            let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            result.append(Chunk(offset: i, type: String(decoding: png[(i + 4)..<(i + 8)], as: UTF8.self), length: length))
            i += 12 + length
        }
        return result
    }

    /// The PNG with chunk `index` (of `chunks`) given new data, its length
    /// and CRC rewritten to match: only what the data says is wrong.
    static func replacingChunk(_ png: [UInt8], _ index: Int, with data: [UInt8]) -> [UInt8] {
        let c = chunks(png)[index]
        var chunk = [UInt8](repeating: 0, count: 4) + Array(c.type.utf8) + data + [0, 0, 0, 0]
        put32(&chunk, 0, UInt32(data.count))
        put32(&chunk, 8 + data.count, crc32(chunk[4..<(8 + data.count)]))
        return Array(png[..<c.offset]) + chunk + Array(png[(c.dataStart + c.length + 4)...])
    }

    /// The data of chunk `index`.
    static func chunkData(_ png: [UInt8], _ index: Int) -> [UInt8] {
        let c = chunks(png)[index]
        return Array(png[c.dataStart..<(c.dataStart + c.length)])
    }

    /// Rewrites IHDR's width and height and recomputes its CRC, so only the
    /// claimed size is wrong.
    static func withIHDRSize(_ png: [UInt8], width: UInt32, height: UInt32) -> [UInt8] {
        var out = png
        put32(&out, 16, width)
        put32(&out, 20, height)
        put32(&out, 29, crc32(out[12..<29]))
        return out
    }

    /// Inserts a chunk before the first chunk of type `before`, with its
    /// correct CRC unless `badCRC`.
    static func insertingChunk(_ png: [UInt8], _ type: String, _ data: [UInt8], before: String, badCRC: Bool = false) -> [UInt8] {
        let at = chunks(png).first { $0.type == before }!.offset
        var chunk = [UInt8](repeating: 0, count: 4) + Array(type.utf8) + data + [0, 0, 0, 0]
        put32(&chunk, 0, UInt32(data.count))
        put32(&chunk, 8 + data.count, crc32(chunk[4..<(8 + data.count)]) ^ (badCRC ? 1 : 0))
        var out = png
        out.insert(contentsOf: chunk, at: at)
        return out
    }

    static func put32(_ bytes: inout [UInt8], _ at: Int, _ v: UInt32) {
        for k in 0..<4 { bytes[at + k] = UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32(k))) }
    }

    /// Offset of the first byte after the first SOS header (entropy data).
    static func jpegScanStart(_ jpeg: [UInt8]) -> Int {
        var i = 2
        while i + 4 <= jpeg.count {
            let marker = jpeg[i + 1]
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            if marker == 0xDA { return i + 2 + length }
            i += 2 + length
        }
        preconditionFailure("no SOS")
    }

    /// Offset of the SOFn segment's marker.
    static func jpegFrameHeader(_ jpeg: [UInt8]) -> Int {
        var i = 2
        while i + 4 <= jpeg.count {
            let marker = jpeg[i + 1]
            if (0xC0...0xC2).contains(marker) { return i }
            i += 2 + (Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3]))
        }
        preconditionFailure("no SOF")
    }
}

/// Hand-made headers of the formats only sniffed (no encoder needed).
enum Handmade {
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func putLE32(_ b: inout [UInt8], _ at: Int, _ v: UInt32) {
        for k in 0..<4 { b[at + k] = UInt8(truncatingIfNeeded: v >> (8 * UInt32(k))) }
    }

    static func riff(_ chunks: [(String, [UInt8])]) -> [UInt8] {
        var body = Array("WEBP".utf8)
        for (id, data) in chunks {
            body += Array(id.utf8) + le32(UInt32(data.count)) + data
            if data.count % 2 == 1 { body.append(0) }
        }
        return Array("RIFF".utf8) + le32(UInt32(body.count)) + body
    }

    /// Lossless: signature 0x2F, then 14-bit width-1 and height-1.
    static func webpLossless(_ width: UInt32, _ height: UInt32) -> [UInt8] {
        let bits = (width - 1) | (height - 1) << 14
        return riff([("VP8L", [0x2F] + le32(bits) + [0, 0, 0])])
    }

    /// Lossy: 3-byte frame tag, start code 9D 01 2A, 14-bit sides.
    static func webpLossy(_ width: UInt16, _ height: UInt16) -> [UInt8] {
        riff([("VP8 ", [0x50, 0x02, 0x00, 0x9D, 0x01, 0x2A] + le16(width) + le16(height) + [UInt8](repeating: 0, count: 8))])
    }

    /// Extended, animated: VP8X canvas then one ANMF chunk per frame.
    static func webpAnimated(_ width: UInt32, _ height: UInt32, frames: Int) -> [UInt8] {
        let canvas = Array(le32(width - 1).prefix(3)) + Array(le32(height - 1).prefix(3))
        var chunks: [(String, [UInt8])] = [("VP8X", [0x02, 0, 0, 0] + canvas), ("ANIM", [0, 0, 0, 0, 0, 0])]
        for _ in 0..<frames { chunks.append(("ANMF", [UInt8](repeating: 0, count: 16))) }
        return riff(chunks)
    }

    /// BITMAPFILEHEADER + BITMAPINFOHEADER, 24-bit, then `rows` of zero
    /// pixels (rows padded to 4 bytes; all of them unless said otherwise).
    static func bmp(_ width: Int32, _ height: Int32, rows: Int? = nil) -> [UInt8] {
        let stride = (Int(width) * 24 + 31) / 32 * 4
        let pixels = stride * (rows ?? Int(abs(height)))
        var b: [UInt8] = [0x42, 0x4D] + le32(UInt32(54 + pixels)) + [0, 0, 0, 0] + le32(54)
        b += le32(40) + le32(UInt32(bitPattern: width)) + le32(UInt32(bitPattern: height))
        b += le16(1) + le16(24) + [UInt8](repeating: 0, count: 24)
        return b + [UInt8](repeating: 0, count: pixels)
    }

    /// ICONDIR with one entry per (width, height, image bytes); a side of
    /// 256 is written as 0, as the format says.
    static func ico(_ images: [(Int, Int, [UInt8])]) -> [UInt8] {
        var b: [UInt8] = [0, 0] + le16(1) + le16(UInt16(images.count))
        var offset = 6 + 16 * images.count
        for (w, h, data) in images {
            b += [UInt8(w & 0xFF), UInt8(h & 0xFF), 0, 0] + le16(1) + le16(32) + le32(UInt32(data.count)) + le32(UInt32(offset))
            offset += data.count
        }
        for (_, _, data) in images { b += data }
        return b
    }

    /// A little- or big-endian classic TIFF: one IFD with width, length
    /// and `strips` strips of `stripBytes` bytes each (zeros).
    static func tiff(_ width: UInt32, _ height: UInt32, littleEndian: Bool = true, strips: Int = 2, stripBytes: Int = 10) -> [UInt8] {
        func u16(_ v: UInt32) -> [UInt8] { littleEndian ? le16(UInt16(v)) : le16(UInt16(v)).reversed() }
        func u32(_ v: UInt32) -> [UInt8] { littleEndian ? le32(v) : le32(v).reversed() }
        let pixelsAt = 8
        let arraysAt = pixelsAt + strips * stripBytes
        let ifdAt = arraysAt + 8 * strips
        var b: [UInt8] = (littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]) + u16(42) + u32(UInt32(ifdAt))
        b += [UInt8](repeating: 0, count: strips * stripBytes)
        for k in 0..<strips { b += u32(UInt32(pixelsAt + k * stripBytes)) }
        for _ in 0..<strips { b += u32(UInt32(stripBytes)) }
        // A field: tag, type (3 SHORT, 4 LONG), count, value or offset.
        func field(_ tag: UInt32, _ type: UInt32, _ count: UInt32, _ value: [UInt8]) -> [UInt8] {
            u16(tag) + u16(type) + u32(count) + value + [UInt8](repeating: 0, count: 4 - value.count)
        }
        let single = strips == 1
        // RowsPerStrip: the rows each strip holds, so that the strips are
        // as many as the image's rows need (libtiff reads them so).
        let rowsPerStrip = (height + UInt32(strips) - 1) / UInt32(strips)
        b += u16(5)
        b += field(256, 3, 1, u16(width))
        b += field(257, 4, 1, u32(height))
        b += field(273, 4, UInt32(strips), single ? u32(UInt32(pixelsAt)) : u32(UInt32(arraysAt)))
        b += field(278, 4, 1, u32(rowsPerStrip))
        b += field(279, 4, UInt32(strips), single ? u32(UInt32(stripBytes)) : u32(UInt32(arraysAt + 4 * strips)))
        return b + u32(0)
    }
}
