import Testing
import TestSupport
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// APNG: every frame after the default image is checked by the APNG walk
/// of png_validate.c (Debian's libpng reads only the default image). The
/// fixture (CImageFixtures, libpng) is a 20x10 RGBA APNG whose default
/// image is frame 1: IHDR acTL fcTL IDAT, then fcTL fdAT per frame, IEND.
@Suite struct DecodeAPNG {
    static let apng = Fixture.apng(20, 10, frames: 3)
    /// Chunk indexes in `apng`.
    static let secondFcTL = 4, secondFdAT = 5, thirdFcTL = 6, lastFdAT = 7

    /// fdAT data: sequence number, then the frame's zlib stream.
    static func fdAT(sequence: UInt32, _ stream: [UInt8]) -> [UInt8] {
        var seq = [UInt8](repeating: 0, count: 4)
        Fixture.put32(&seq, 0, sequence)
        return seq + stream
    }

    /// `rows` rows of a 20-pixel RGBA frame (1 filter byte + 80 bytes).
    static func rows(_ rows: Int, filter: UInt8 = 0) -> [UInt8] {
        (0..<rows).flatMap { _ in [filter] + [UInt8](repeating: 0x7F, count: 80) }
    }

    @Test func everyFrameIsCheckedAndCounted() {
        #expect(Fixture.chunks(Self.apng).map(\.type) == ["IHDR", "acTL", "fcTL", "IDAT", "fcTL", "fdAT", "fcTL", "fdAT", "IEND"])
        #expect(validate(Self.apng) == .success(ImageInfo(format: .png, width: 20, height: 10, frames: 3)))
        // Hand-made frame data of the exact length passes too.
        let stored = Fixture.replacingChunk(Self.apng, Self.lastFdAT, with: Self.fdAT(sequence: 4, TinyPNG.zlibStored(Self.rows(10))))
        #expect(validate(stored) == .success(ImageInfo(format: .png, width: 20, height: 10, frames: 3)))
    }

    @Test func cutShortIsRejected() {
        let b = Self.apng
        for cut in [b.count / 4, b.count / 2, b.count * 3 / 4, b.count - 20, b.count - 1] {
            let r = reason(validate(Array(b.prefix(cut))))
            #expect(r?.hasPrefix("truncated PNG: ") == true, "cut to \(cut) of \(b.count): \(r ?? "accepted")")
        }
    }

    @Test func cutShortWithChunkLengthAndCRCPatchedIsRejected() {
        // The last frame's fdAT cut in half, its length and CRC made to
        // match, IEND kept: the container is whole, the frame is not.
        let data = Fixture.chunkData(Self.apng, Self.lastFdAT)
        for keep in [6, data.count / 2, data.count - 5] {
            let cut = Fixture.replacingChunk(Self.apng, Self.lastFdAT, with: Array(data.prefix(keep)))
            let r = reason(validate(cut))
            #expect(r?.hasPrefix("truncated PNG: APNG frame 3: ") == true || r?.hasPrefix("corrupt PNG: APNG frame 3: ") == true,
                    "fdAT kept \(keep) of \(data.count) bytes: \(r ?? "accepted")")
        }
        // Exact stored streams say how far the rows went.
        let short = Fixture.replacingChunk(Self.apng, Self.lastFdAT, with: Self.fdAT(sequence: 4, TinyPNG.zlibStored(Self.rows(4))))
        #expect(reason(validate(short)) == "truncated PNG: APNG frame 3: image data ends at row 4 of 10")
        var unended = TinyPNG.zlibStored(Self.rows(10))
        unended.removeLast(4)  // no Adler-32
        let noEnd = Fixture.replacingChunk(Self.apng, Self.lastFdAT, with: Self.fdAT(sequence: 4, unended))
        #expect(reason(validate(noEnd)) == "truncated PNG: APNG frame 3: zlib stream not ended after the last row")
    }

    @Test func damagedFramesAreRejected() {
        // A CRC error in an fdAT, which libpng would forgive in an unknown chunk.
        var badCRC = Self.apng
        let fdat = Fixture.chunks(badCRC)[Self.secondFdAT]
        badCRC[fdat.dataStart + fdat.length] ^= 0x01
        #expect(reason(validate(badCRC)) == "corrupt PNG: fdAT: CRC error")
        // A filter type above 4.
        let badFilter = Fixture.replacingChunk(Self.apng, Self.lastFdAT, with: Self.fdAT(sequence: 4, TinyPNG.zlibStored(Self.rows(3) + Self.rows(7, filter: 9))))
        #expect(reason(validate(badFilter)) == "corrupt PNG: APNG frame 3: fdAT: bad adaptive filter value 9 at row 3 of 10")
        // A wrong Adler-32.
        var stream = TinyPNG.zlibStored(Self.rows(10))
        stream[stream.count - 1] ^= 0xFF
        let badAdler = Fixture.replacingChunk(Self.apng, Self.lastFdAT, with: Self.fdAT(sequence: 4, stream))
        #expect(reason(validate(badAdler)) == "corrupt PNG: APNG frame 3: fdAT: incorrect data check")
        // Sequence numbers out of order.
        let data = Fixture.chunkData(Self.apng, Self.lastFdAT)
        let badSequence = Fixture.replacingChunk(Self.apng, Self.lastFdAT, with: Self.fdAT(sequence: 9, Array(data.dropFirst(4))))
        #expect(reason(validate(badSequence)) == "corrupt PNG: fdAT: sequence number 9 where 4 was due")
        // acTL announcing more frames than there are.
        let actl = Fixture.replacingChunk(Self.apng, 1, with: [0, 0, 0, 5, 0, 0, 0, 0])
        #expect(reason(validate(actl)) == "corrupt PNG: acTL announces 5 frames, 3 fcTL chunks found")
    }

    /// `IHDR fcTL(0) acTL IDAT fcTL(1) fdAT(2) ...`: the first fcTL before
    /// the acTL. libpng's APNG patch (Firefox and the decoders built on it)
    /// reads an fcTL wherever it comes before IDAT, checking its sequence
    /// number, not the acTL (png_handle_fcTL), so the file animates.
    @Test func fcTLBeforeAcTLIsAnimated() {
        let c = Fixture.chunks(Self.apng)
        func bytes(_ k: Int) -> [UInt8] { Array(Self.apng[c[k].offset..<(c[k].dataStart + c[k].length + 4)]) }
        let swapped = Array(Self.apng.prefix(8)) + bytes(0) + bytes(2) + bytes(1) + (3..<c.count).flatMap(bytes)
        #expect(Fixture.chunks(swapped).map(\.type) == ["IHDR", "fcTL", "acTL", "IDAT", "fcTL", "fdAT", "fcTL", "fdAT", "IEND"])
        #expect(validate(swapped) == .success(ImageInfo(format: .png, width: 20, height: 10, frames: 3)))
        // Its sequence numbers still count: fcTL(0) before the acTL is due.
        var late = Fixture.chunkData(swapped, 1)
        Fixture.put32(&late, 0, 1)
        #expect(reason(validate(Fixture.replacingChunk(swapped, 1, with: late))) == "corrupt PNG: fcTL: sequence number 1 where 0 was due")
        // An acTL after IDAT still makes no APNG: the default image alone.
        let noAnimation = Array(Self.apng.prefix(8)) + bytes(0) + bytes(2) + bytes(3) + bytes(1) + (4..<c.count).flatMap(bytes)
        #expect(validate(noAnimation) == .success(ImageInfo(format: .png, width: 20, height: 10, frames: 1)))
    }

    @Test func frameOutsideTheCanvasIsRejected() {
        var fctl = Fixture.chunkData(Self.apng, Self.thirdFcTL)
        Fixture.put32(&fctl, 12, 5)  // x offset 5: 20 pixels wide from x 5 passes the 20-pixel canvas
        let outside = Fixture.replacingChunk(Self.apng, Self.thirdFcTL, with: fctl)
        #expect(reason(validate(outside)) == "corrupt PNG: APNG frame 3 (20x10 at 5,0) lies outside the 20x10 canvas")
    }

    @Test func animationBombIsRefusedBeforeInflating() {
        // 25 frames of 200 pixels: the canvas passes a limit of 300, the
        // frames together pass 10 x 300 by frame 16.
        let bomb = Fixture.apng(20, 10, frames: 25)
        var options = ValidationOptions()
        options.maxPixels = 300
        #expect(reason(validate(bomb, options)) == "PNG frames add up to more than 10 times the pixel limit of 300 (3200 pixels by frame 16)")
        #expect(validate(bomb) == .success(ImageInfo(format: .png, width: 20, height: 10, frames: 25)))
    }
}
