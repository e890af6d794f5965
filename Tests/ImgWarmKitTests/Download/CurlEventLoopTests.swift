import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDownload

@Suite struct CurlEventLoopTests {
    /// A loop made but never started (the `Downloader` whose next loop could
    /// not be made drops it) frees its multi handle, and with it the two
    /// descriptors of libcurl's wakeup pair: 64 such loops would leave 128
    /// open. Other tests open and close descriptors meanwhile, hence the
    /// margin.
    @Test func aLoopThatNeverStartedFreesItsMultiHandle() throws {
        try CurlGlobal.initialize()
        let traffic = HostTraffic(rates: RequestRates(), bytesPerSecond: nil, loops: 1, initialLimit: 0, now: 0)
        let before = Descriptors.openCount()
        for _ in 0..<64 {
            _ = try CurlEventLoop(configuration: DownloaderConfiguration(), traffic: traffic)
        }
        let after = Descriptors.openCount()
        #expect(after - before < 64, "\(before) -> \(after)")
    }
}
