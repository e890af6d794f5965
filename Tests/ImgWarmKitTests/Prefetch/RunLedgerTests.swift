import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The report's image and response columns: what the ledger keeps per
/// entry (frames, Content-Type, Vary: Accept) and the `-v` line's details.
@Suite struct ReportFormatColumns {
    @Test(arguments: [
        (nil, false), ("Accept", true), ("accept", true), ("Accept-Encoding", false),
        ("Accept-Encoding, Accept", true), (" Origin ,ACCEPT ", true), ("*", true), ("Accept-Language", false), ("", false),
    ] as [(String?, Bool)])
    func variesOnAccept(_ vary: String?, _ expected: Bool) {
        #expect(ResponseFacts.variesOnAccept(vary) == expected)
    }

    @Test func ledgerKeepsFramesAndResponses() {
        let ledger = RunLedger(entries: 4, problems: 0)
        var r = EntryResult()
        r.outcome = .downloaded
        r.format = .webp
        ledger.record(0, r, image: ImageInfo(format: .webp, width: 10, height: 5, frames: 7),
                      response: ResponseFacts(contentType: "image/webp", vary: "Accept"))
        r.format = .png
        ledger.record(1, r, image: ImageInfo(format: .png, width: 3, height: 3, frames: 1),
                      response: ResponseFacts(contentType: "image/png", vary: nil))
        r.format = .gif
        ledger.record(2, r, image: ImageInfo(format: .gif, width: 3, height: 3, frames: nil),
                      response: ResponseFacts(contentType: "image/webp", vary: nil))
        var cached = EntryResult()
        cached.outcome = .cached
        ledger.record(3, cached)
        #expect(ledger.frames(0) == 7 && ledger.frames(1) == 1 && ledger.frames(2) == nil && ledger.frames(3) == nil)
        #expect(ledger.response(0) == ResponseFacts(contentType: "image/webp", vary: "Accept"))
        #expect(ledger.response(1)?.contentType == "image/png" && ledger.response(1)?.variesOnAccept == false)
        #expect(ledger.response(2)?.contentType == "image/webp")
        #expect(ledger.response(3) == nil)
    }

    @Test func manyDistinctContentTypesStillComeBack() {
        let ledger = RunLedger(entries: 300, problems: 0)
        var r = EntryResult()
        r.outcome = .downloaded
        for i in 0..<300 {
            ledger.record(i, r, response: ResponseFacts(contentType: "image/x-\(i)", vary: i % 2 == 0 ? "Accept" : nil))
        }
        for i in 0..<300 {
            #expect(ledger.response(i) == ResponseFacts(contentType: "image/x-\(i)", vary: i % 2 == 0 ? "Accept" : nil))
        }
    }

    @Test func verboseDetails() {
        let webp = ResponseFacts(contentType: "image/webp", vary: "Accept")
        #expect(ProgressPrinter.entryDetails(format: .webp, dimensions: (300, 200), frames: 5, response: webp)
            == " (webp 300x200, 5 frames, image/webp, Vary: Accept)")
        #expect(ProgressPrinter.entryDetails(format: .png, dimensions: (3, 2), frames: 1, response: ResponseFacts(contentType: nil, vary: nil))
            == " (png 3x2)")
        #expect(ProgressPrinter.entryDetails(format: .unknown, dimensions: nil, frames: nil, response: nil) == " (unknown)")
        #expect(ProgressPrinter.entryDetails(format: nil, dimensions: nil, frames: nil, response: nil) == "")
    }
}
