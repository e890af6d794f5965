import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The summary's last line: where to look next, as a command a shell reads
/// back as it is shown.
@Suite struct ProgressPrinterTests {
    @Test(arguments: [
        (nil, 0, false, [], nil),
        ("r.json", 0, false, [], "report: r.json"),
        (nil, 2, false, [], "failed URLs: imgwarm cache failed"),
        ("out/r.json", 1, false, ["--cache", "/data/c", "--layout", "glide"],
         "report: out/r.json; failed URLs: imgwarm cache failed --cache /data/c --layout glide"),
        (nil, 1, false, ["--cache", "/data/my cache"], "failed URLs: imgwarm cache failed --cache '/data/my cache'"),
        (nil, 1, false, ["--cache", "it's"], "failed URLs: imgwarm cache failed --cache 'it'\\''s'"),
        (nil, 1, false, ["--cache", "$HOME/c"], "failed URLs: imgwarm cache failed --cache '$HOME/c'"),
        // A dry run fails nothing for real: only the report is named.
        ("r.json", 3, true, [], "report: r.json"),
        (nil, 3, true, [], nil),
    ] as [(String?, Int, Bool, [String], String?)])
    func whereToLook(_ report: String?, _ failed: Int, _ dryRun: Bool, _ cache: [String], _ line: String?) {
        #expect(ProgressPrinter.whereToLook(report: report, failed: failed, dryRun: dryRun, cacheArguments: cache) == line)
    }
}
