import Testing
@testable import ImgWarmWarm

@Suite("Run descriptors")
struct RunDescriptorsTests {
    /// The soft limit a run asks for, and the transfers that fit under the
    /// limit it gets: 32 for the run itself, 3 a transfer.
    @Test(arguments: [
        // concurrency, limit, wanted, transfers (nil: not even one fits)
        (16, 1024, 80, 16),
        (256, 1024, 800, 256),     // -j auto's ceiling fits the usual 1024
        (256, 512, 800, 160),
        (16, 80, 80, 16),
        (16, 79, 80, 15),
        (16, 44, 80, 4),
        (16, 35, 80, 1),
        (16, 34, 80, nil),         // ulimit -n 34: refused, not a trap
        (16, 16, 80, nil),
        (0, 1024, 35, 1),          // clamped to one transfer
    ] as [(Int, Int, Int, Int?)])
    func transfersFitTheLimit(_ row: (Int, Int, Int, Int?)) {
        let (concurrency, limit, wanted, transfers) = row
        #expect(RunDescriptors.wanted(concurrency: concurrency) == wanted)
        #expect(RunDescriptors.transfers(concurrency: concurrency, limit: limit) == transfers)
    }
}
