import Testing
@testable import ImgWarmWarm

@Suite("Run threads")
struct RunThreadsTests {
    /// Cores for the engine's automatic thread count, workers after it,
    /// and whether a write-only entry stays on the engine's thread.
    @Test(arguments: [
        // cores, decode, --download-threads, engine cores, workers, stores on the engine
        (2, true, nil, 2, 2, false),     // validating: a loop and a decoder per core, as before
        (8, true, nil, 8, 8, false),
        (2, true, 1, 2, 2, false),
        (2, false, nil, 1, 1, false),    // --no-validate on 2 cores: one loop, one store worker (measured)
        (4, false, nil, 2, 2, false),
        (3, false, nil, 2, 1, false),
        (1, false, nil, 1, 1, true),     // one core: a hand-off buys nothing
        (0, false, nil, 1, 1, true),     // clamped to one core
        (2, false, 1, 2, 1, false),      // the user's one thread leaves a core to the store worker
        (2, false, 2, 2, 1, true),       // the user's threads fill the cores: stores stay on them
        (4, false, 6, 4, 1, true),
        (4, false, 1, 4, 3, false),
    ] as [(Int, Bool, Int?, Int, Int, Bool)])
    func coresAreShared(_ row: (Int, Bool, Int?, Int, Int, Bool)) {
        let (cores, decode, requested, engineCores, workers, onEngine) = row
        let t = RunThreads(cores: cores, decode: decode, requestedLoops: requested)
        #expect(t.engineCores == engineCores)
        #expect(t.workers == workers)
        #expect(t.storesOnEngine == onEngine)
    }
}
