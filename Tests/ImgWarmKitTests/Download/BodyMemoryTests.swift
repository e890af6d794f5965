import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

struct BodyMemoryTests {
    /// Charges fit under the limit; the oldest holder may always grow (no
    /// deadlock of paused partial bodies); a dropped charge is released.
    @Test func chargesPauseAndRelease() {
        let memory = BodyMemory(limit: 100)
        var a: BodyMemory.Charge? = memory.charge()
        let b = memory.charge()
        #expect(a!.grow(to: 60))
        #expect(b.grow(to: 40))
        #expect(!b.grow(to: 50))          // full, and b is not the oldest
        #expect(!b.mayGrow)
        #expect(a!.grow(to: 90))          // the oldest may go past the limit
        #expect(memory.figures.used == 130)
        a = nil                           // the body was dropped
        #expect(memory.figures.used == 40)
        #expect(b.mayGrow && b.grow(to: 100))
        b.reset()
        #expect(memory.figures.used == 0 && memory.figures.peak == 130)
    }

    @Test func runMemoryIsSplit() {
        let mib: UInt64 = 1 << 20, gib: UInt64 = 1 << 30
        func split(_ m: UInt64?, _ d: UInt64?) -> [UInt64] {
            let r = RunMemory.split(memory: m, decodeMemory: d, defaultDecodeMemory: gib)
            return [r.decoders, r.bodies]
        }
        #expect(split(nil, nil) == [gib, gib])
        #expect(split(64 * mib, nil) == [32 * mib, 32 * mib])
        #expect(split(64 * mib, 16 * mib) == [16 * mib, 48 * mib])
        #expect(split(nil, 2 * gib) == [2 * gib, 2 * gib])
    }
}
