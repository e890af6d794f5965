import Foundation
import Testing

/// OkHttp's own HTTP cache (Debian's libokhttp-java, OkHttp 3.13:
/// `new Cache(dir, max)` in an `OkHttpClient`) run on a folder through
/// `Tests/AndroidReader/OkHttpCacheRead.java`: requests each URL with the
/// origin stopped, lists `Cache.urls()`, flushes, closes and reopens.
public struct OkHttpCacheReader: Sendable {
    public struct Answer: Equatable, Sendable {
        public var status: Int
        public var length: Int
        public var sha256: String
        /// cache, network, both, none; "ERR" when the call failed.
        public var source: String
        public init(status: Int, length: Int, sha256: String, source: String) {
            self.status = status
            self.length = length
            self.sha256 = sha256
            self.source = source
        }
    }

    public struct Reading: Sendable {
        public var answers: [String: Answer]
        public var urls: [String]
        public var reopenedCount: Int
        public var status: Int32
        public var output: String
    }

    let java: String
    let classpath: String

    public static var shared: OkHttpCacheReader? { compiled.value }

    static let compiled = Lazy<OkHttpCacheReader?> {
        guard let javac = findTool("javac"), let java = findTool("java"),
              let okhttp = DiskLruReader.jar("libokhttp-java", named: "okhttp.jar"),
              let okio = DiskLruReader.jar("libokio-java", named: "okio.jar") else { return nil }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AndroidReader/OkHttpCacheRead.java").path
        let out = makeTempDirectory("imgwarm-okhttp-cache-reader")
        let classpath = "\(okhttp):\(okio)"
        guard let result = runTool(javac, ["-cp", classpath, "-d", out, source]), result.status == 0 else { return nil }
        return OkHttpCacheReader(java: java, classpath: "\(out):\(classpath)")
    }

    /// `force`: every request with `CacheControl.FORCE_CACHE`; else plain.
    public func read(_ directory: String, force: Bool, urls: [String]) throws -> Reading {
        guard let result = runTool(java, ["-cp", classpath, "OkHttpCacheRead", directory, force ? "force" : "plain"] + urls) else {
            throw TestServerError(description: "java did not run")
        }
        var reading = Reading(answers: [:], urls: [], reopenedCount: -1, status: result.status, output: result.output)
        for line in result.output.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if f.count == 2 && f[0] == "URLS" { reading.urls.append(f[1]) } else if f.count == 2 && f[0] == "REOPENED" {
                reading.reopenedCount = Int(f[1]) ?? -1
            } else if f.count == 5 {
                reading.answers[f[0]] = Answer(status: Int(f[1]) ?? -1, length: Int(f[2]) ?? -1, sha256: f[3], source: f[4])
            } else if f.count >= 2 && f[1] == "ERR" {
                reading.answers[f[0]] = Answer(status: -1, length: -1, sha256: "", source: "ERR")
            }
        }
        return reading
    }
}
