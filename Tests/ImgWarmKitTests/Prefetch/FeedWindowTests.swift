import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

@Suite("Feed window")
struct FeedWindowTests {
    /// While the feeder sleeps, `depth - wakeBatch` entries stay
    /// outstanding: never fewer than the transfers allowed in flight.
    @Test(arguments: [
        // adaptive, concurrency, workers, depth, wakeBatch
        (true, 256, 2, 290, 34),    // the defaults on 2 cores: wake every 34, 256 left outstanding
        (true, 256, 0, 288, 32),
        (true, 16, 2, 50, 25),      // a small ceiling: half the depth is within the margin
        (true, 1, 1, 34, 17),
        (false, 16, 2, 34, 17),     // -j 16: half the depth, as before
        (false, 256, 2, 514, 257),
        (false, 1, 1, 3, 1),
        (false, 0, 0, 2, 1),        // clamped: at least one transfer, at least one per wakeup
    ])
    func feederWakesBeforeTheEngineRunsDry(_ row: (Bool, Int, Int, Int, Int)) {
        let (adaptive, concurrency, workers, depth, wakeBatch) = row
        let w = FeedWindow(adaptive: adaptive, concurrency: concurrency, validationWorkers: workers)
        #expect(w.depth == depth)
        #expect(w.wakeBatch == wakeBatch)
        #expect(w.depth - w.wakeBatch >= max(1, concurrency))
        #expect(w.wakeBatch >= 1)
    }
}
