#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

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

    /// The reader thread's writes: each line whole, with its newline, on
    /// the descriptor it was given (no FILE shared across threads).
    @Test func linesAreWrittenWholeToTheDescriptor() {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let long = String(repeating: "x", count: 10_000)
        ErrorOutput.writeLine("imgwarm: decoder library: SPS error", to: ends[1])
        ErrorOutput.writeLine(long, to: ends[1])
        close(ends[1])
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        close(ends[0])
        #expect(String(decoding: data, as: UTF8.self) == "imgwarm: decoder library: SPS error\n" + long + "\n")
    }
}
