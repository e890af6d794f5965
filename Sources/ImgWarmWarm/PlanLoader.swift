/// `warm`'s input: the manifests, then the failed entries of each
/// `--retry-from` report, read in the order given into one `WarmPlan`.
/// The caller builds the plan (priority, order, shard) and reports the
/// problems; this type only reads.
public struct PlanLoader {
    public var manifests: [String]
    public var retryFrom: [String]
    public var options: ManifestOptions
    /// URLs given as arguments: each a manifest line of its own, read
    /// after the manifests (their source is `<arguments>:N`, N counting
    /// from 1).
    public var urlArguments: [String]

    public init(manifests: [String], retryFrom: [String] = [], options: ManifestOptions = ManifestOptions(),
                urlArguments: [String] = []) {
        self.manifests = manifests
        self.retryFrom = retryFrom
        self.options = options
        self.urlArguments = urlArguments
    }

    /// The name the report and JUnit give to URLs from the command line.
    public static let argumentsName = "<arguments>"

    /// Reads every file into `plan` and finalizes it. An unusable line
    /// goes into `plan.problems` and, as it is read, to `problem` as one
    /// line "file:line: reason"; the rest of the input goes on. A manifest
    /// or report that cannot be read at all (missing, a folder, not a
    /// report) stops the load: an `ImgWarmError` naming it (exit 2).
    public func load(into plan: WarmPlan, problem: (String) -> Void) throws {
        let reader = ManifestReader(options: options)
        for path in manifests {
            let fileIndex = plan.addManifestPath(path)
            try reader.read(path: path, fileIndex: fileIndex, entry: plan.add, problem: { p in
                plan.add(p)
                problem("\(plan.describe(p.source)): \(p.reason)")
            })
        }
        if !urlArguments.isEmpty {
            let fileIndex = plan.addManifestPath(Self.argumentsName)
            for (i, url) in urlArguments.enumerated() {
                switch reader.parse(line: Array(url.utf8), source: ManifestSource(fileIndex: fileIndex, line: i + 1)) {
                case .none: break
                case .entry(let e): plan.add(e)
                case .problem(let p):
                    plan.add(p)
                    problem("\(plan.describe(p.source)): \(p.reason)")
                }
            }
        }
        for path in retryFrom {
            let fileIndex = plan.addManifestPath(path)
            let failed = try ReportReader.failedEntries(reportPath: path, fileIndex: fileIndex, options: options)
            for entry in failed.entries { plan.add(entry) }
            for p in failed.problems {
                plan.add(p)
                problem("\(plan.describe(p.source)): \(p.reason)")
            }
        }
        plan.finalize()
    }
}

// @unchecked Sendable: a plan changes only while it is loaded (add,
// finalize), before the run's threads see it; they only read it.
extension WarmPlan: @unchecked Sendable {}
