import CImageFixtures
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// AVIF, HEIC and JPEG XL images made by the encoders of CImageFixtures
/// (libavif + aom, libheif + x265, libjxl), and the byte surgery the tests
/// of those decoders need: ISO-BMFF boxes (AVIF, HEIC and the JPEG XL
/// container share the box layout: 32-bit big-endian size, then the type)
/// and the JPEG XL SizeHeader.
enum ModernFixture {
    static func avif(_ width: UInt32, _ height: UInt32, frames: UInt32 = 1, alpha: Bool = false) -> [UInt8] {
        Fixture.take { iwf_avif(width, height, frames, alpha ? 1 : 0, $0) }
    }

    static func heic(_ width: UInt32, _ height: UInt32, alpha: Bool = false) -> [UInt8] {
        Fixture.take { iwf_heic(width, height, alpha ? 1 : 0, $0) }
    }

    static func avifGrid(tile width: UInt32, _ height: UInt32, columns: UInt32, rows: UInt32) -> [UInt8] {
        Fixture.take { iwf_avif_grid(width, height, columns, rows, $0) }
    }

    static func jxl(_ width: UInt32, _ height: UInt32, frames: UInt32 = 1, container: Bool = false) -> [UInt8] {
        Fixture.take { iwf_jxl(width, height, frames, container ? 1 : 0, $0) }
    }

    struct Box { var offset: Int; var size: Int; var type: String }

    /// The top-level boxes (no 64-bit or to-the-end sizes: our encoders
    /// write neither).
    static func boxes(_ file: [UInt8]) -> [Box] {
        var result: [Box] = []
        var i = 0
        while i + 8 <= file.count {
            let size = Int(be32(file, i))
            result.append(Box(offset: i, size: size, type: String(decoding: file[(i + 4)..<(i + 8)], as: UTF8.self)))
            guard size >= 8 else { break }
            i += size
        }
        return result
    }

    /// The file cut to `length` bytes with its last top-level box (`mdat`,
    /// or `jxlc`/`jxlp` in the JPEG XL container) shrunk to end there, so
    /// every box size agrees with the cut and only the content is missing.
    static func cutWithPatchedSizes(_ file: [UInt8], to length: Int) -> [UInt8] {
        let last = boxes(file).last!
        precondition(length > last.offset + 8, "cut inside the last box's header")
        var out = Array(file.prefix(length))
        Fixture.put32(&out, last.offset, UInt32(length - last.offset))
        return out
    }

    /// Offsets of the `ispe` (image spatial extents) properties: a full box
    /// of 20 bytes, size, `ispe`, version and flags, width, height (ISO/IEC
    /// 23008-12 6.5.3).
    static func ispeOffsets(_ file: [UInt8]) -> [Int] {
        let tag = Array("ispe".utf8)
        return (4..<(file.count - 16)).filter { i in
            Array(file[i..<(i + 4)]) == tag && be32(file, i - 4) == 20
        }.map { $0 - 4 }
    }

    /// Every `ispe` rewritten to claim width x height.
    static func withISPE(_ file: [UInt8], width: UInt32, height: UInt32) -> [UInt8] {
        var out = file
        let offsets = ispeOffsets(file)
        precondition(!offsets.isEmpty, "no ispe")
        for at in offsets {
            Fixture.put32(&out, at + 12, width)
            Fixture.put32(&out, at + 16, height)
        }
        return out
    }

    /// The JPEG XL SizeHeader after the codestream's FF 0A, bits least
    /// significant first (libjxl lib/jxl/headers.cc, SizeHeader::VisitFields):
    /// `small` (1 bit) = 0, then ysize - 1 as U32(Bits(9), Bits(13),
    /// Bits(18), Bits(30)) (a 2-bit selector, then the bits), `ratio` (3
    /// bits) = 0, then xsize - 1 the same way. Returns (bit offset, bit
    /// count, value + 1) of ysize and xsize, for rewriting in place.
    struct JXLSize { var yBit: Int; var yBits: Int; var height: Int; var xBit: Int; var xBits: Int; var width: Int }

    static func jxlSize(_ file: [UInt8], codestreamAt start: Int) -> JXLSize {
        var bit = (start + 2) * 8
        func read(_ n: Int) -> Int {
            var v = 0
            for k in 0..<n { v |= Int(file[(bit + k) / 8] >> UInt8((bit + k) % 8) & 1) << k }
            bit += n
            return v
        }
        precondition(read(1) == 0, "small SizeHeader")
        let widths = [9, 13, 18, 30]
        let yBits = widths[read(2)]
        let yBit = bit
        let height = read(yBits) + 1
        precondition(read(3) == 0, "SizeHeader with a ratio")
        let xBits = widths[read(2)]
        let xBit = bit
        let width = read(xBits) + 1
        return JXLSize(yBit: yBit, yBits: yBits, height: height, xBit: xBit, xBits: xBits, width: width)
    }

    /// Writes `value` over `count` bits at `bit`, least significant first.
    static func putBits(_ file: inout [UInt8], _ bit: Int, _ count: Int, _ value: Int) {
        for k in 0..<count {
            let mask = UInt8(1 << ((bit + k) % 8))
            if value >> k & 1 == 1 { file[(bit + k) / 8] |= mask } else { file[(bit + k) / 8] &= ~mask }
        }
    }

    static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }
}
