import CImageFixtures
import Dispatch
import Foundation
import Testing
import TestSupport
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

enum Mutation {
    /// One random damage: bit flips, a truncation, inserted bytes, an
    /// overwritten run, or a removed run.
    static func mutate(_ original: [UInt8], _ rng: inout SeededRandom) -> [UInt8] {
        var b = original
        switch Int.random(in: 0..<5, using: &rng) {
        case 0:
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                b[Int.random(in: 0..<b.count, using: &rng)] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
            }
        case 1:
            b = Array(b.prefix(Int.random(in: 0..<b.count, using: &rng)))
        case 2:
            let at = Int.random(in: 0...b.count, using: &rng)
            b.insert(contentsOf: (0..<Int.random(in: 1...16, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }, at: at)
        case 3:
            let at = Int.random(in: 0..<b.count, using: &rng)
            for i in at..<min(b.count, at + Int.random(in: 1...32, using: &rng)) { b[i] = UInt8.random(in: 0...255, using: &rng) }
        default:
            let at = Int.random(in: 0..<b.count, using: &rng)
            b.removeSubrange(at..<min(b.count, at + Int.random(in: 1...64, using: &rng)))
        }
        return b
    }
}

@Suite struct DecodeFuzz {
    static let seeds: [(String, [UInt8])] = [
        ("PNG RGBA", Fixture.png(24, 16, .rgba)),
        ("PNG interlaced palette tRNS", Fixture.png(24, 16, .palette, interlaced: true, trns: true)),
        ("PNG 16-bit gray", Fixture.png(24, 16, .gray, depth: 16)),
        ("APNG", Fixture.apng(16, 8, frames: 2)),
        ("JPEG baseline", Fixture.jpeg(24, 16, markers: true)),
        ("JPEG progressive", Fixture.jpeg(24, 16, IWF_JPEG_PROGRESSIVE)),
        ("JPEG CMYK", Fixture.jpeg(24, 16, IWF_JPEG_CMYK)),
        ("GIF animated", Fixture.gif(24, 16, frames: 3)),
        ("WebP header", Handmade.webpAnimated(30, 20, frames: 2)),
        ("WebP lossy alpha", Fixture.webp(24, 16, alpha: true)),
        ("WebP lossless", Fixture.webp(24, 16, lossless: true)),
        ("WebP animated", Fixture.webpAnimated(24, 16, frames: 2)),
        ("ICO", Handmade.ico([(16, 16, Fixture.png(16, 16)), (8, 8, [UInt8](repeating: 1, count: 40))])),
        ("TIFF", Handmade.tiff(30, 20)),
        ("BMP", Handmade.bmp(30, 20)),
    ]

    /// Thousands of damaged copies of each image must never crash or hang
    /// the validator, and every verdict must be well formed. The run is
    /// bounded in time as well as in count, to stay inside the suite's
    /// budget on slow machines.
    @Test func randomMutationsNeverCrash() {
        // IMGWARM_FUZZ_ITERATIONS / IMGWARM_FUZZ_SECONDS run a longer hunt
        // by hand; the defaults keep the suite's run short.
        let env = ProcessInfo.processInfo.environment
        let perImage = env["IMGWARM_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 4000
        let deadline = Date().addingTimeInterval(env["IMGWARM_FUZZ_SECONDS"].flatMap(Double.init) ?? 15)
        var failures = 0, passes = 0
        var headerOnly = ValidationOptions()
        headerOnly.decode = false
        for (index, (name, original)) in Self.seeds.enumerated() {
            var rng = SeededRandom(seed: 0x1316_0000 + UInt64(index))
            for i in 0..<perImage {
                let mutated = Mutation.mutate(original, &rng)
                // The header-only path (--no-validate) reads the same bytes.
                _ = ImageValidator.validate(mutated, options: headerOnly)
                switch ImageValidator.validate(mutated, options: ValidationOptions()) {
                case .success(let info):
                    passes += 1
                    if let w = info.width, let h = info.height {
                        #expect(w > 0 && h > 0, "\(name) mutation \(i) passed with \(w)x\(h)")
                    }
                case .failure(let f):
                    failures += 1
                    #expect(!f.reason.isEmpty && !f.reason.contains("\n"), "\(name) mutation \(i): \(f.reason.debugDescription)")
                }
                if Date() > deadline { break }
            }
        }
        // Damage is mostly caught: a validator that passed everything would
        // also "never crash".
        #expect(failures > passes, "\(failures) failures, \(passes) passes")
    }

    /// Called from many threads at once, the validator gives each caller
    /// the same verdict it gives one thread.
    @Test func concurrentCallsAgreeWithSerialOnes() {
        var inputs: [[UInt8]] = Self.seeds.map(\.1)
        var rng = SeededRandom(seed: 42)
        for _ in 0..<200 { inputs.append(Mutation.mutate(Self.seeds.randomElement(using: &rng)!.1, &rng)) }
        let serial = inputs.map { ImageValidator.validate($0, options: ValidationOptions()) }
        let frozen = inputs
        var parallel = [Result<ImageInfo, ValidationFailure>?](repeating: nil, count: inputs.count)
        parallel.withUnsafeMutableBufferPointer { slots in
            nonisolated(unsafe) let out = slots
            DispatchQueue.concurrentPerform(iterations: frozen.count * 4) { i in
                let r = ImageValidator.validate(frozen[i % frozen.count], options: ValidationOptions())
                if i < frozen.count { out[i] = r }
            }
        }
        #expect(parallel.map { $0! } == serial)
    }
}
