import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

struct WebPCase: CustomTestStringConvertible, Sendable {
    var name: String
    var bytes: [UInt8]
    var info: ImageInfo
    var testDescription: String { name }
}

/// WebP decoded by libwebp: made here by libwebp's own encoders
/// (CImageFixtures: WebPEncodeRGBA, WebPEncodeLosslessRGBA, WebPAnimEncoder).
@Suite struct DecodeWebP {
    static let cases: [WebPCase] = [
        WebPCase(name: "lossy", bytes: Fixture.webp(67, 45), info: ImageInfo(format: .webp, width: 67, height: 45, frames: 1)),
        WebPCase(name: "lossy with alpha", bytes: Fixture.webp(67, 45, alpha: true), info: ImageInfo(format: .webp, width: 67, height: 45, frames: 1)),
        WebPCase(name: "lossless", bytes: Fixture.webp(67, 45, lossless: true), info: ImageInfo(format: .webp, width: 67, height: 45, frames: 1)),
        WebPCase(name: "lossless with alpha", bytes: Fixture.webp(67, 45, lossless: true, alpha: true), info: ImageInfo(format: .webp, width: 67, height: 45, frames: 1)),
        WebPCase(name: "1x1", bytes: Fixture.webp(1, 1), info: ImageInfo(format: .webp, width: 1, height: 1, frames: 1)),
        WebPCase(name: "animated lossy", bytes: Fixture.webpAnimated(40, 30, frames: 3), info: ImageInfo(format: .webp, width: 40, height: 30, frames: 3)),
        WebPCase(name: "animated lossless", bytes: Fixture.webpAnimated(40, 30, frames: 4, lossless: true), info: ImageInfo(format: .webp, width: 40, height: 30, frames: 4)),
    ]

    @Test(arguments: cases)
    func validIsAccepted(_ c: WebPCase) {
        #expect(validate(c.bytes) == .success(c.info))
        // What the encoder wrote is what the case says it is.
        let ids = Fixture.riffChunks(c.bytes).map(\.id)
        if c.name.contains("animated") { #expect(ids.filter { $0 == "ANMF" }.count == c.info.frames) }
        if c.name == "lossy with alpha" { #expect(ids == ["VP8X", "ALPH", "VP8 "]) }
        if c.name.hasPrefix("lossless") { #expect(ids == ["VP8L"]) }
    }

    @Test(arguments: cases)
    func cutShortIsRejected(_ c: WebPCase) {
        for fraction in [0.25, 0.5, 0.75, 0.9] {
            let cut = Int(Double(c.bytes.count) * fraction)
            let r = reason(validate(Array(c.bytes.prefix(cut))))
            #expect(r?.hasPrefix("truncated WebP: ") == true, "\(c.name) cut to \(cut) of \(c.bytes.count): \(r ?? "accepted")")
        }
    }

    @Test(arguments: cases)
    func cutShortWithContainerSizesPatchedIsRejected(_ c: WebPCase) {
        for fraction in [0.5, 0.75, 0.9] {
            // Even lengths: RIFF chunks are padded to even sizes.
            let cut = Int(Double(c.bytes.count) * fraction) & ~1
            let patched = Fixture.webpCutWithSizesPatched(c.bytes, to: cut)
            #expect(Fixture.riffChunks(patched).last.map { $0.at + 8 + $0.size } == patched.count)
            let r = reason(validate(patched))
            #expect(r?.hasPrefix("truncated WebP: ") == true || r?.hasPrefix("corrupt WebP: ") == true,
                    "\(c.name) cut to \(cut) of \(c.bytes.count), sizes patched: \(r ?? "accepted")")
        }
    }

    @Test func bombIsRefusedFromTheHeader() {
        // VP8L's 14-bit sides: 16384 x 16384 from a 30-byte header.
        #expect(reason(validate(Handmade.webpLossless(16384, 16384))) == "WebP 16384x16384 exceeds the pixel limit of 100000000")
        // Animated: the canvas passes, the frames together do not.
        var options = ValidationOptions()
        options.maxPixels = 5000
        let animation = Fixture.webpAnimated(64, 64, frames: 20)
        #expect(reason(validate(animation, options)) == "WebP frames add up to more than 10 times the pixel limit of 5000 (53248 pixels by frame 13)")
        #expect(validate(animation) == .success(ImageInfo(format: .webp, width: 64, height: 64, frames: 20)))
    }

    @Test func frameOutsideTheCanvasIsRejected() {
        // Grow the second frame's x offset (ANMF bytes 0-2, in units of 2
        // pixels) so the frame hangs past the canvas edge.
        var b = Fixture.webpAnimated(40, 30, frames: 2)
        let second = Fixture.riffChunks(b).filter { $0.id == "ANMF" }[1]
        b[second.at + 8] = 5
        #expect(reason(validate(b)) == "corrupt WebP: invalid animation: chunks or frame rectangles do not fit the canvas")
    }

    @Test func strictFormatsAcceptWebP() {
        var options = ValidationOptions()
        options.strictFormats = true
        #expect(validate(Fixture.webp(8, 8), options) == .success(ImageInfo(format: .webp, width: 8, height: 8, frames: 1)))
    }
}
