import Testing
@testable import ImgWarmDownload
@testable import ImgWarmWarm

/// Download threads when `--download-threads` is not given: one when
/// nothing is decoded (the engine thread does each file's whole work, and a
/// second one only adds wakeups), the engine's per-core rule otherwise.
@Suite("Automatic download threads")
struct AutomaticDownloadThreadsTests {
    @Test(arguments: [
        // decoding, cores, -j, threads
        (false, 2, 16, 1),
        (false, 8, 256, 1),
        (true, 2, 16, 2),
        (true, 8, 256, 4),
        (true, 2, 8, 1),
    ])
    func oneThreadWithoutDecodingThePerCoreRuleWith(_ row: (Bool, Int, Int, Int)) {
        let (decoding, cores, concurrency, threads) = row
        let split = LoopSplit(concurrency: concurrency, perHost: nil,
                              requested: WarmOptions.automaticDownloadThreads(decoding: decoding), cores: cores)
        #expect(split.count == threads)
    }
}
