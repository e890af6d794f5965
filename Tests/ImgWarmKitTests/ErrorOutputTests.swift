import Testing
@testable import ImgWarmKit

/// What the stderr reader thread does with each line a decoder library
/// writes (Support/ErrorOutput.swift).
@Suite struct ErrorOutputTests {
    @Test(arguments: [
        // (line, verbose, shown)
        ("./lib/jxl/dec_frame.cc:644: JXL_FAILURE: Error in DC group", false, nil),
        ("./lib/jxl/dec_frame.cc:644: JXL_FAILURE: Error in DC group", true,
         "imgwarm: decoder library: ./lib/jxl/dec_frame.cc:644: JXL_FAILURE: Error in DC group"),
        ("SPS error: CB alignment", false, nil),
        // The Swift runtime's own reports always pass, verbose or not.
        ("imgwarm/Prefetcher.swift:12: Fatal error: Unexpectedly found nil", false,
         "imgwarm/Prefetcher.swift:12: Fatal error: Unexpectedly found nil"),
        ("💣 Program crashed: Illegal instruction at 0x0000", false, "💣 Program crashed: Illegal instruction at 0x0000"),
    ] as [(String, Bool, String?)])
    func forwarding(line: String, verbose: Bool, shown: String?) {
        #expect(ErrorOutput.forwardedLine(line, verbose: verbose) == shown)
    }
}
