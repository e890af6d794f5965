import Crypto
import Foundation
import Testing
import TestSupport

/// The recipes of docs/recipes/ run: each page's script under examples/
/// (or the Kubernetes and GitHub Actions YAML) against the loopback server
/// with the real binary (IMGWARM), as a user would run it. What needs an
/// Apple device (the app-side Swift, `xcrun simctl`) is shown on the pages,
/// not run here.
@Suite struct RecipeTests {
    static let examples = BinaryRunner.examplesDirectory
    static let env = ["IMGWARM": BinaryRunner.executable]

    static func md5(_ s: String) -> String { Insecure.MD5.hash(data: Data(s.utf8)).map { String(format: "%02x", $0) }.joined() }
    static func sha1(_ s: String) -> String { Insecure.SHA1.hash(data: Data(s.utf8)).map { String(format: "%02x", $0) }.joined() }
    static func sha256(_ s: String) -> String { SHA256.hash(data: Data(s.utf8)).map { String(format: "%02x", $0) }.joined() }

    static func bytes(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { [UInt8]($0) } }

    static func run(_ script: String, _ args: [String], environment: [String: String] = env,
                    directory: String? = nil) throws -> (status: Int32, output: String) {
        try #require(runTool(examples + "/" + script, args, environment: environment, directory: directory),
                     "\(script) could not be started")
    }

    /// Three good PNGs and their URLs, served by `f`.
    static func goodImages(_ f: WarmFixture) -> [String] { f.servePNGs(3) }

    /// A page with an image's name (what a captive portal or a CDN error
    /// page serves): a broken image.
    static func brokenImage(_ f: WarmFixture) -> String {
        f.server.setFile("/broken.jpg", bytes: Array("<html><body>Not here</body></html>".utf8), contentType: "text/html")
        return f.server.url("/broken.jpg")
    }

    // MARK: docs/recipes/bundled-cache.md

    @Test func bundledCacheHoldsEachLibrarysNamesAndNoState() throws {
        let f = try WarmFixture()
        let urls = Self.goodImages(f)
        let manifest = f.writeManifest(urls)
        let out = f.dir + "/bundle"
        let r = try Self.run("ios/warm-bundle.sh", [manifest, out, "sdwebimage", "kingfisher", "nuke"])
        #expect(r.status == 0, "\(r.output)")
        let fm = FileManager.default
        for url in urls {
            let served = f.served[String(url.dropFirst(f.server.baseURL.count))]
            // SDWebImage's <md5>.<ext> (docs/cache-formats.md), read through additionalCachePathBlock.
            #expect(Self.bytes("\(out)/WarmedImages/\(Self.md5(url)).png") == served, "\(url)")
            let kingfisher = "\(out)/com.onevcat.Kingfisher.ImageCache.default/\(Self.sha256(url))"
            #expect(Self.bytes(kingfisher) == served, "\(url)")
            // --expiration never: Kingfisher's deadline (the modification
            // date) far in the future, past any build or install date.
            let deadline = try #require(try fm.attributesOfItem(atPath: kingfisher)[.modificationDate] as? Date)
            #expect(deadline > Date(timeIntervalSince1970: 10_000_000_000), "\(deadline)")
            #expect(Self.bytes("\(out)/com.github.kean.Nuke.DataCache/\(Self.sha1(url))") == served, "\(url)")
        }
        for folder in ["WarmedImages", "com.onevcat.Kingfisher.ImageCache.default", "com.github.kean.Nuke.DataCache"] {
            let names = try fm.contentsOfDirectory(atPath: out + "/" + folder)
            #expect(names.count == urls.count && !names.contains(".imgwarm"), "\(folder): \(names)")
        }
    }

    @Test func bundledCacheFailsOnABrokenImageAndKeepsTheGoodOnes() throws {
        let f = try WarmFixture()
        let urls = Self.goodImages(f)
        let broken = Self.brokenImage(f)
        let manifest = f.writeManifest(urls + [broken])
        let out = f.dir + "/bundle"
        let r = try Self.run("ios/warm-bundle.sh", [manifest, out])
        #expect(r.status == 1, "\(r.output)")
        #expect(r.output.contains(broken), "\(r.output)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out + "/WarmedImages").sorted()
        #expect(names == urls.map { Self.md5($0) + ".png" }.sorted())
        #expect(try Self.run("ios/warm-bundle.sh", [manifest]).status == 2)
    }

    // MARK: docs/recipes/simulator-cache.md

    @Test(arguments: [
        // The folder each library's default cache reads under Library/Caches:
        // SDImageCache.m (defaultDiskCacheDirectory + namespace "default"),
        // Kingfisher DiskStorage.swift (Creation: "com.onevcat.Kingfisher.ImageCache.\(name)",
        // ImageCache.default's name "default"), Nuke ImagePipeline+Configuration.swift
        // (withDataCache's name "com.github.kean.Nuke.DataCache").
        ("sdwebimage", "com.hackemist.SDImageCache/default"),
        ("kingfisher", "com.onevcat.Kingfisher.ImageCache.default"),
        ("nuke", "com.github.kean.Nuke.DataCache"),
    ])
    func simulatorContainerGetsTheLibrarysDefaultFolder(_ layout: String, _ folder: String) throws {
        let f = try WarmFixture()
        let urls = Self.goodImages(f)
        let manifest = f.writeManifest(urls)
        let container = f.dir + "/data-container"
        try FileManager.default.createDirectory(atPath: container + "/Library/Preferences", withIntermediateDirectories: true)
        let r = try Self.run("ios/fill-simulator.sh", [container, manifest, layout])
        #expect(r.status == 0, "\(r.output)")
        for url in urls {
            let name: String
            switch layout {
            case "sdwebimage": name = Self.md5(url) + ".png"
            case "kingfisher": name = Self.sha256(url)
            default: name = Self.sha1(url)
            }
            let file = "\(container)/Library/Caches/\(folder)/\(name)"
            #expect(Self.bytes(file) == f.served[String(url.dropFirst(f.server.baseURL.count))], "\(file)")
        }
    }

    @Test func simulatorScriptRefusesAFolderThatIsNoContainer() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(Self.goodImages(f))
        let r = try Self.run("ios/fill-simulator.sh", [f.dir + "/nothing", manifest])
        #expect(r.status == 2)
        #expect(r.output.contains("/nothing/Library: no such folder"), "\(r.output)")
        #expect(!FileManager.default.fileExists(atPath: f.dir + "/nothing"))
    }

    // MARK: YAML read as the runners read it

    static let yamlAvailable: Bool = {
        guard let python = findTool("python3") else { return false }
        return runTool(python, ["-c", "import yaml"])?.status == 0
    }()

    /// The YAML files as JSON, parsed by PyYAML (`safe_load_all`).
    static func yaml(_ files: [String]) throws -> [[String: Any]] {
        let python = try neededTool("python3", for: "reading the examples' YAML")
        let script = "import json, sys, yaml\nprint(json.dumps([d for f in sys.argv[1:] for d in yaml.safe_load_all(open(f))], default=str))"
        let r = try #require(runTool(python, ["-c", script] + files.map { examples + "/" + $0 }))
        try #require(r.status == 0, "PyYAML: \(r.output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [[String: Any]])
    }

    static func dict(_ any: Any?, _ path: String...) -> [String: Any]? {
        var node = any
        for key in path { node = (node as? [String: Any])?[key] }
        return node as? [String: Any]
    }

    // MARK: docs/recipes/kubernetes-shared-volume.md

    /// The Indexed Job's pods, one per JOB_COMPLETION_INDEX, all at once on
    /// one cache folder, then the CronJob's prune on it: with the YAML's own
    /// arguments, the volume paths mapped to a temp folder.
    @Test(.needs(yamlAvailable, "needs python3 with PyYAML (python3-yaml): the Kubernetes recipe did not run"))
    func kubernetesJobShardsTheManifestAndTheCronJobPrunesTheSameVolume() throws {
        let docs = try Self.yaml(["kubernetes/cache-volume.yaml", "kubernetes/indexed-job.yaml", "kubernetes/prune-cronjob.yaml"])
        let claim = try #require(docs.first { $0["kind"] as? String == "PersistentVolumeClaim" })
        let job = try #require(docs.first { $0["kind"] as? String == "Job" })
        let cron = try #require(docs.first { $0["kind"] as? String == "CronJob" })
        let claimName = try #require(Self.dict(claim, "metadata")?["name"] as? String)
        #expect((Self.dict(claim, "spec")?["accessModes"] as? [String]) == ["ReadWriteMany"])
        #expect(Self.dict(job, "spec")?["completionMode"] as? String == "Indexed")
        let completions = try #require(Self.dict(job, "spec")?["completions"] as? Int)

        /// A pod spec's container args and the claim behind its `cache` volume.
        func pod(_ spec: [String: Any]?) throws -> (args: [String], claim: String?, mount: String?) {
            let container = try #require((spec?["containers"] as? [[String: Any]])?.first)
            let volumes = spec?["volumes"] as? [[String: Any]] ?? []
            let cacheVolume = volumes.first { $0["name"] as? String == "cache" }
            let mount = (container["volumeMounts"] as? [[String: Any]])?.first { $0["name"] as? String == "cache" }?["mountPath"] as? String
            return (container["args"] as? [String] ?? [], Self.dict(cacheVolume, "persistentVolumeClaim")?["claimName"] as? String, mount)
        }
        let warm = try pod(Self.dict(job, "spec", "template", "spec"))
        let prune = try pod(Self.dict(cron, "spec", "jobTemplate", "spec", "template", "spec"))
        #expect(warm.claim == claimName && prune.claim == claimName, "both mount the claim \(claimName)")
        #expect(warm.mount == "/cache" && prune.mount == "/cache")
        // The kubelet would make .imgwarm group-writable at each mount otherwise, which imgwarm refuses.
        for spec in [Self.dict(job, "spec", "template", "spec"), Self.dict(cron, "spec", "jobTemplate", "spec", "template", "spec")] {
            #expect(Self.dict(spec, "securityContext")?["fsGroupChangePolicy"] as? String == "OnRootMismatch")
        }
        let cacheArg = { (args: [String]) in args.first { $0.hasPrefix("--cache=") } }
        #expect(cacheArg(warm.args) != nil && cacheArg(warm.args) == cacheArg(prune.args), "the same cache folder")

        let f = try WarmFixture()
        let urls = f.servePNGs(24)
        let root = f.dir + "/volumes"
        try FileManager.default.createDirectory(atPath: root + "/manifests", withIntermediateDirectories: true)
        // The volume's mount point exists in every pod (the reports go there,
        // checked before the first request).
        try FileManager.default.createDirectory(atPath: root + "/cache", withIntermediateDirectories: true)
        try (urls.joined(separator: "\n") + "\n").write(toFile: root + "/manifests/images.txt", atomically: true, encoding: .utf8)
        func mapped(_ args: [String], index: Int? = nil) -> [String] {
            args.map { arg in
                var a = arg.replacingOccurrences(of: "/cache", with: root + "/cache")
                    .replacingOccurrences(of: "/manifests", with: root + "/manifests")
                if let index { a = a.replacingOccurrences(of: "$(JOB_COMPLETION_INDEX)", with: String(index)) }
                return a
            }
        }
        // Every pod at once, as parallelism allows; Kubernetes sets
        // JOB_COMPLETION_INDEX in each.
        let pods = try (0..<completions).map { i in
            try BinaryRunner.start(mapped(warm.args, index: i), environment: ["JOB_COMPLETION_INDEX": String(i)])
        }
        let results = pods.map { $0.wait(timeout: 120) }
        for (i, r) in results.enumerated() { #expect(r.status == 0, "pod \(i): \(r.stderr)") }
        for (i, url) in urls.enumerated() {
            #expect(f.server.requestCount(path: "/img/\(i).png") == 1, "\(url) fetched once across the shards")
        }
        let cache = String(try #require(cacheArg(mapped(warm.args))).dropFirst("--cache=".count))
        let names = try FileManager.default.contentsOfDirectory(atPath: cache).filter { !$0.hasPrefix(".") }.sorted()
        #expect(names == urls.map { Self.md5($0) + ".png" }.sorted())
        for i in 0..<completions { #expect(FileManager.default.fileExists(atPath: "\(root)/cache/report-shard-\(i).json")) }

        // The CronJob: nothing is old yet; then one file not accessed for 40 days goes.
        let first = try BinaryRunner.run(mapped(prune.args))
        #expect(first.status == 0 && first.stdout.hasPrefix("removed 0 files"), "\(first.stdout)\(first.stderr)")
        let old = cache + "/" + names[0]
        let fortyDaysAgo = timespec(tv_sec: time(nil) - 40 * 86_400, tv_nsec: 0)
        var times = [fortyDaysAgo, fortyDaysAgo]
        #expect(utimensat(AT_FDCWD, old, &times, 0) == 0)
        let second = try BinaryRunner.run(mapped(prune.args))
        #expect(second.status == 0 && second.stdout.hasPrefix("removed 1 file"), "\(second.stdout)\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: old))
    }

    // MARK: docs/recipes/ci-artifact.md

    /// The workflow's Warm step runs the script as the runner would (from
    /// the checkout, with the step's arguments); the JUnit and upload steps
    /// publish exactly what the script wrote, even when it failed.
    @Test(.needs(yamlAvailable, "needs python3 with PyYAML (python3-yaml): the CI recipe did not run"))
    func ciWorkflowPublishesWhatItsScriptWrites() throws {
        let workflow = try #require(try Self.yaml(["ci/warm-and-publish.yml"]).first)
        let steps = try #require(Self.dict(workflow, "jobs", "warm")?["steps"] as? [[String: Any]])
        let warmStep = try #require(steps.first { ($0["run"] as? String)?.contains("warm-and-publish.sh") == true })
        let words = (warmStep["run"] as! String).split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        #expect(words.first == "examples/ci/warm-and-publish.sh")
        let out = words[1], manifestPath = words[2]
        let junitStep = try #require(steps.first { ($0["uses"] as? String)?.hasPrefix("mikepenz/action-junit-report@") == true })
        #expect(junitStep["if"] as? String == "always()")
        #expect(Self.dict(junitStep, "with")?["report_paths"] as? String == out + "/junit.xml")
        let upload = try #require(steps.first { ($0["uses"] as? String)?.hasPrefix("actions/upload-artifact@") == true })
        #expect(upload["if"] as? String == "always()")
        let uploaded = (Self.dict(upload, "with")?["path"] as? String ?? "").split(separator: "\n").map(String.init)
        #expect(Set(uploaded) == [out + "/report.json", out + "/junit.xml", out + "/image-cache.tar.gz"])

        let f = try WarmFixture()
        let urls = Self.goodImages(f)
        let broken = Self.brokenImage(f)
        let missing = f.server.url("/status/404")
        let checkout = f.dir + "/checkout"
        try FileManager.default.createDirectory(atPath: checkout + "/" + (manifestPath as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try ((urls + [broken, missing]).joined(separator: "\n") + "\n").write(toFile: checkout + "/" + manifestPath, atomically: true, encoding: .utf8)
        let script = Self.examples + "/ci/warm-and-publish.sh"
        let r = try #require(runTool(script, Array(words.dropFirst()), environment: Self.env, directory: checkout))
        #expect(r.status == 1, "broken images fail the job: \(r.output)")

        let junit = try String(contentsOfFile: "\(checkout)/\(out)/junit.xml", encoding: .utf8)
        #expect(junit.components(separatedBy: "<testcase ").count - 1 == 5, "\(junit)")
        #expect(junit.components(separatedBy: "<failure ").count - 1 == 2, "\(junit)")
        let report = try f.report("\(checkout)/\(out)/report.json")
        #expect(report.entries.count == 5)
        let tar = try neededTool("tar", for: "listing the cache artifact")
        let listed = try #require(runTool(tar, ["-tzf", "\(checkout)/\(out)/image-cache.tar.gz"]))
        let files = listed.output.split(separator: "\n").map(String.init).filter { !$0.hasSuffix("/") }.sorted()
        #expect(files == urls.map { "./" + Self.md5($0) + ".png" }.sorted(), "\(listed.output)")

        // The cache kept, as the recipe advises, and nothing fixed: the
        // broken and missing images are still missing, so the job fails
        // again (they are blocked, not fetched).
        let kept = try #require(runTool(script, Array(words.dropFirst()), environment: Self.env, directory: checkout))
        #expect(kept.status == 1, "missing images fail the job again: \(kept.output)")
        let keptJUnit = try String(contentsOfFile: "\(checkout)/\(out)/junit.xml", encoding: .utf8)
        #expect(keptJUnit.components(separatedBy: "<failure type=\"blocked\"").count - 1 == 2, "\(keptJUnit)")
        #expect(f.server.requestCount(path: "/status/404") == 1)

        // Fixed at the source: the next run (the cache restored) passes.
        f.server.setFile("/broken.jpg", bytes: TinyPNG.make(width: 5, height: 5, seed: 99), contentType: "image/png")
        try ((urls + [broken]).joined(separator: "\n") + "\n").write(toFile: checkout + "/" + manifestPath, atomically: true, encoding: .utf8)
        let again = try #require(runTool(script, Array(words.dropFirst()) , environment: Self.env.merging(["IMGWARM_ARGS": "--retry-failed"]) { $1 },
                                         directory: checkout))
        #expect(again.status == 0, "\(again.output)")
    }
}
