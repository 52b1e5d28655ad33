// A small back-pressured job that takes unaligned checkpoints on a local MiniCluster and keeps
// them. Written for flinkstate: its checkpoints are read by flinkstate's own reader and compared
// with Flink's loader (tools/real-checkpoints/flink_loader.py).
//
// Usage: java -cp <pyflink/lib/*>:<classes> CheckpointJob KEY=VALUE ...
//   variant=NAME topology=keyed|rebalance|union|string-keyed out=DIR seconds=N upstream=P
//   downstream=P
//   second_upstream=P (union: the parallelism of the second source)
//   payload=CHARS sleep_micros=N inline_threshold=SIZE file_merging=true|false
//   restore_downstream=P (then the same job again, restored from the latest retained checkpoint
//   with in-flight data at downstream parallelism P, its checkpoints under <variant>/restored)
//   restore_seconds=N restore_interval=DURATION during_recovery=true|false (both of Flink's
//   options for checkpointing during recovery, for the restored job)
// Records are Tuple2<Long,String>: a sequence number from fromSequence and "p<seq>" padded with
// 'x'. The keyed topology keys by f0 % 1000 into a counter that sleeps per record, which
// back-pressures the upstream subtasks so that buffers are in flight when barriers arrive.
// The string-keyed topology's records are Tuple2<String,Long> instead: a String key of 1,000
// (ASCII, Latin-1 and beyond the BMP, so that String.hashCode() reads UTF-16 units) and the
// sequence number, keyed by the String f0.

import java.io.DataInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

public class CheckpointJob {

    /** Turns a sequence number into the record the other operators see. */
    public static final class ToRecord implements MapFunction<Long, Tuple2<Long, String>> {
        private final int payload;

        public ToRecord(int payload) {
            this.payload = payload;
        }

        @Override
        public Tuple2<Long, String> map(Long seq) {
            StringBuilder text = new StringBuilder("p").append(seq);
            while (text.length() < payload) {
                text.append('x');
            }
            return Tuple2.of(seq, text.toString());
        }
    }

    /** Turns a sequence number into a record keyed by a String: one of 1,000 keys. */
    public static final class ToStringRecord implements MapFunction<Long, Tuple2<String, Long>> {
        @Override
        public Tuple2<String, Long> map(Long seq) {
            return Tuple2.of(stringKey(seq % 1000), seq);
        }
    }

    /** Key n of 1,000: ASCII, with an accent (one UTF-16 unit) or with an emoji (two). */
    static String stringKey(long n) {
        String prefix = n % 3 == 0 ? "key-" : n % 3 == 1 ? "cl\u00e9-" : "\ud83d\ude00-";
        return prefix + n;
    }

    /** Counts records per key in a ValueState and sleeps per record: the slow operator. */
    public static final class SlowCounter<K, T> extends KeyedProcessFunction<K, T, T> {
        private final long sleepMicros;
        private transient ValueState<Long> count;

        public SlowCounter(long sleepMicros) {
            this.sleepMicros = sleepMicros;
        }

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext context) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        }

        @Override
        public void processElement(T record, Context context, Collector<T> out) throws Exception {
            Long seen = count.value();
            count.update(seen == null ? 1L : seen + 1);
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(sleepMicros));
            out.collect(record);
        }
    }

    /** Passes records on, sleeping per record when told to. */
    public static final class Relay implements MapFunction<Tuple2<Long, String>, Tuple2<Long, String>> {
        private final long sleepMicros;

        public Relay(long sleepMicros) {
            this.sleepMicros = sleepMicros;
        }

        @Override
        public Tuple2<Long, String> map(Tuple2<Long, String> record) {
            if (sleepMicros > 0) {
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(sleepMicros));
            }
            return record;
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> arg = new LinkedHashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("arguments are KEY=VALUE, got " + a);
            }
            arg.put(a.substring(0, eq), a.substring(eq + 1));
        }
        String variant = arg.get("variant");
        Path root = new File(arg.get("out")).getAbsoluteFile().toPath().resolve(variant);
        int seconds = Integer.parseInt(arg.getOrDefault("seconds", "15"));
        int downstream = Integer.parseInt(arg.getOrDefault("downstream", "4"));
        String restoreDownstream = arg.get("restore_downstream");
        String firstNote = restoreDownstream == null
                ? ""
                : "restored_by=restored/ (the same job restored from one of these checkpoints at "
                        + "downstream parallelism " + restoreDownstream + ")\n";
        Path jobDir = runJob(arg, root, downstream, seconds, new LinkedHashMap<>(), firstNote);
        if (restoreDownstream != null) {
            restore(arg, root, jobDir, downstream, Integer.parseInt(restoreDownstream));
        }
        System.exit(0);
    }

    /**
     * Runs the same job again from the latest retained checkpoint of the first run that holds
     * in-flight data, at another downstream parallelism, and keeps the restored job's first
     * checkpoints under root/restored.
     */
    private static void restore(
            Map<String, String> arg, Path root, Path firstJob, int before, int after)
            throws Exception {
        Path checkpoint = latestWithInFlightData(firstJob);
        Map<String, String> extra = new LinkedHashMap<>();
        extra.put(StateRecoveryOptions.SAVEPOINT_PATH.key(), checkpoint.toString());
        // the restored job keeps every checkpoint it takes: its first ones are the point
        extra.put("execution.checkpointing.num-retained", "1000");
        extra.put("execution.checkpointing.interval", arg.getOrDefault("restore_interval", "100ms"));
        boolean duringRecovery = Boolean.parseBoolean(arg.getOrDefault("during_recovery", "false"));
        extra.put(
                CheckpointingOptions.UNALIGNED_RECOVER_OUTPUT_ON_DOWNSTREAM.key(),
                String.valueOf(duringRecovery));
        extra.put(
                CheckpointingOptions.CHECKPOINTING_DURING_RECOVERY_ENABLED.key(),
                String.valueOf(duringRecovery));
        String note = "restored_from=" + root.relativize(checkpoint) + "\n"
                + "restored_from_checkpoint_id=" + checkpoint.getFileName().toString().substring(4) + "\n"
                + "downstream_parallelism_before_restore=" + before + "\n"
                + "downstream_parallelism=" + after + "\n"
                + "checkpointing_during_recovery=" + duringRecovery + "\n";
        int seconds = Integer.parseInt(arg.getOrDefault("restore_seconds", "3"));
        runJob(arg, root.resolve("restored"), after, seconds, extra, note);
    }

    /** The latest chk-N of a job whose channel state holds data (in-flight buffers). */
    private static Path latestWithInFlightData(Path jobDir) throws Exception {
        java.util.List<Path> found;
        try (var entries = Files.list(jobDir)) {
            found = entries.filter(p -> p.getFileName().toString().startsWith("chk-"))
                    .filter(p -> Files.exists(p.resolve("_metadata")))
                    .sorted(java.util.Comparator.comparingLong(
                            (Path p) -> Long.parseLong(p.getFileName().toString().substring(4)))
                            .reversed())
                    .toList();
        }
        for (Path checkpoint : found) {
            CheckpointMetadata metadata;
            try (DataInputStream in = new DataInputStream(
                    new FileInputStream(checkpoint.resolve("_metadata").toFile()))) {
                metadata = Checkpoints.loadCheckpointMetadata(
                        in, CheckpointJob.class.getClassLoader(), checkpoint.toString());
            }
            long inFlight = 0;
            for (OperatorState operator : metadata.getOperatorStates()) {
                for (OperatorSubtaskState subtask : operator.getStates()) {
                    inFlight += subtask.getInputChannelState().getStateSize()
                            + subtask.getResultSubpartitionState().getStateSize();
                }
            }
            if (inFlight > 0) {
                return checkpoint;
            }
        }
        throw new IllegalStateException("no retained checkpoint of " + jobDir + " holds in-flight data");
    }

    /** Runs the job with its checkpoints under root until cancelled; returns its job folder. */
    private static Path runJob(
            Map<String, String> arg,
            Path root,
            int downstream,
            int seconds,
            Map<String, String> extra,
            String note)
            throws Exception {
        String variant = arg.get("variant");
        String topology = arg.getOrDefault("topology", "keyed");
        int upstream = Integer.parseInt(arg.getOrDefault("upstream", "2"));
        int payload = Integer.parseInt(arg.getOrDefault("payload", "16"));
        long sleepMicros = Long.parseLong(arg.getOrDefault("sleep_micros", "1000"));

        Files.createDirectories(root);
        Map<String, String> conf = new LinkedHashMap<>();
        conf.put("execution.checkpointing.interval", arg.getOrDefault("interval", "300ms"));
        conf.put("execution.checkpointing.mode", "EXACTLY_ONCE");
        conf.put("execution.checkpointing.unaligned.enabled", "true");
        conf.put("execution.checkpointing.aligned-checkpoint-timeout", "0ms");
        conf.put("execution.checkpointing.max-concurrent-checkpoints", "1");
        conf.put("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
        conf.put("execution.checkpointing.num-retained", arg.getOrDefault("retained", "10"));
        conf.put("execution.checkpointing.storage", "filesystem");
        conf.put("execution.checkpointing.dir", root.toUri().toString());
        conf.put("execution.checkpointing.data-inline-threshold", arg.getOrDefault("inline_threshold", "20kb"));
        conf.put("execution.checkpointing.file-merging.enabled", arg.getOrDefault("file_merging", "false"));
        conf.put("state.backend.type", "hashmap");
        conf.put("taskmanager.memory.segment-size", arg.getOrDefault("segment_size", "4kb"));
        conf.put("minicluster.number-of-taskmanagers", "2");
        conf.put("taskmanager.numberOfTaskSlots", "2");
        conf.put("pipeline.max-parallelism", arg.getOrDefault("max_parallelism", "128"));
        conf.put("pipeline.name", "ckpt-" + variant);
        conf.put("rest.bind-port", "0");
        conf.put("rest.address", "127.0.0.1");
        conf.put("jobmanager.bind-host", "127.0.0.1");
        conf.put("taskmanager.bind-host", "127.0.0.1");
        conf.put("taskmanager.host", "127.0.0.1");
        conf.putAll(extra);

        StringBuilder description = new StringBuilder();
        description.append("variant=").append(variant).append('\n');
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
        // the string-keyed topology makes records of its own type from its own source
        DataStream<Tuple2<Long, String>> records =
                topology.equals("string-keyed") ? null : records(env, upstream, payload, "");
        if (topology.equals("keyed")) {
            description.append("topology=[source -> to-record] (p=").append(upstream)
                    .append(") --HASH(keyBy f0%1000)--> [slow-counter (ValueState<Long>) -> sink] (p=")
                    .append(downstream).append(")\n");
            description.append("key=f0 % 1000 (Long)\n");
            records.keyBy(record -> record.f0 % 1000, Types.LONG)
                    .process(new SlowCounter<Long, Tuple2<Long, String>>(sleepMicros))
                    .returns(Types.TUPLE(Types.LONG, Types.STRING))
                    .setParallelism(downstream)
                    .uid("slow-counter")
                    .name("slow-counter")
                    .sinkTo(new DiscardingSink<>())
                    .setParallelism(downstream)
                    .uid("sink")
                    .name("sink");
        } else if (topology.equals("string-keyed")) {
            description.append("topology=[source -> to-record] (p=").append(upstream)
                    .append(") --HASH(keyBy f0)--> [slow-counter (ValueState<Long>) -> sink] (p=")
                    .append(downstream).append(")\n");
            description.append("key=f0 (String)\n");
            env.fromSequence(0, Long.MAX_VALUE)
                    .setParallelism(upstream)
                    .uid("source")
                    .name("source")
                    .map(new ToStringRecord())
                    .returns(Types.TUPLE(Types.STRING, Types.LONG))
                    .setParallelism(upstream)
                    .uid("to-record")
                    .name("to-record")
                    .keyBy(record -> record.f0, Types.STRING)
                    .process(new SlowCounter<String, Tuple2<String, Long>>(sleepMicros))
                    .returns(Types.TUPLE(Types.STRING, Types.LONG))
                    .setParallelism(downstream)
                    .uid("slow-counter")
                    .name("slow-counter")
                    .sinkTo(new DiscardingSink<>())
                    .setParallelism(downstream)
                    .uid("sink")
                    .name("sink");
        } else if (topology.equals("rebalance")) {
            description.append("topology=[source -> to-record] (p=").append(upstream)
                    .append(") --REBALANCE--> [relay] (p=").append(downstream)
                    .append(") --FORWARD--> [slow-relay -> sink] (p=").append(downstream).append(")\n");
            records.rebalance()
                    .map(new Relay(0))
                    .returns(Types.TUPLE(Types.LONG, Types.STRING))
                    .setParallelism(downstream)
                    .uid("relay")
                    .name("relay")
                    .forward()
                    .map(new Relay(sleepMicros))
                    .returns(Types.TUPLE(Types.LONG, Types.STRING))
                    .setParallelism(downstream)
                    .uid("slow-relay")
                    .name("slow-relay")
                    .startNewChain()
                    .sinkTo(new DiscardingSink<>())
                    .setParallelism(downstream)
                    .uid("sink")
                    .name("sink");
        } else if (topology.equals("union")) {
            // Two sources united before one keyBy: the keyed operator reads two input gates,
            // one per upstream job vertex, with one logical input over both.
            int secondUpstream = Integer.parseInt(arg.getOrDefault("second_upstream", "3"));
            DataStream<Tuple2<Long, String>> second =
                    records(env, secondUpstream, payload, "-b");
            description.append("topology=[source -> to-record] (p=").append(upstream)
                    .append(") UNION [source-b -> to-record-b] (p=").append(secondUpstream)
                    .append(") --HASH(keyBy f0%1000)--> [slow-counter (ValueState<Long>) -> sink] (p=")
                    .append(downstream).append(")\n");
            description.append("key=f0 % 1000 (Long)\n");
            records.union(second)
                    .keyBy(record -> record.f0 % 1000, Types.LONG)
                    .process(new SlowCounter<Long, Tuple2<Long, String>>(sleepMicros))
                    .returns(Types.TUPLE(Types.LONG, Types.STRING))
                    .setParallelism(downstream)
                    .uid("slow-counter")
                    .name("slow-counter")
                    .sinkTo(new DiscardingSink<>())
                    .setParallelism(downstream)
                    .uid("sink")
                    .name("sink");
        } else {
            throw new IllegalArgumentException(
                    "topology is keyed, rebalance, union or string-keyed, got " + topology);
        }
        description.append(
                topology.equals("string-keyed")
                        ? "record_type=Tuple2<String,Long> (f0=key, f1=seq)\n"
                        : "record_type=Tuple2<Long,String> (f0=seq, f1=payload)\n");
        description.append("payload_bytes=").append(payload).append('\n');
        description.append("sleep_micros_per_record_in_slow_operator=").append(sleepMicros).append('\n');
        description.append("run_seconds=").append(seconds).append('\n');
        description.append(note);
        for (Map.Entry<String, String> e : conf.entrySet()) {
            description.append(e.getKey()).append('=').append(e.getValue()).append('\n');
        }
        Files.writeString(root.resolve("job-config.txt"), description.toString());

        JobClient client = env.executeAsync("ckpt-" + variant);
        Path jobDir = root.resolve(client.getJobID().toString());
        long start = System.nanoTime();
        for (int second = 1; second <= seconds; second++) {
            Thread.sleep(1000);
            JobStatus status = client.getJobStatus().get();
            if (status.isGloballyTerminalState()) {
                throw new IllegalStateException("the job ended on its own: " + status);
            }
            System.out.printf(
                    "%s: %d/%d s, %d checkpoints retained%n",
                    variant, second, seconds, retained(jobDir));
        }
        client.cancel().get(60, TimeUnit.SECONDS);
        // a cancelled job's result completes exceptionally; waiting for it waits for the end
        client.getJobExecutionResult().handle((result, failure) -> null).get(60, TimeUnit.SECONDS);
        System.out.printf(
                "%s: cancelled after %.1f s, %d checkpoints retained in %s%n",
                variant, (System.nanoTime() - start) / 1e9, retained(jobDir), jobDir);
        return jobDir;
    }

    /** A sequence source and its map to records, named source{suffix} and to-record{suffix}. */
    private static DataStream<Tuple2<Long, String>> records(
            StreamExecutionEnvironment env, int parallelism, int payload, String suffix) {
        return env.fromSequence(0, Long.MAX_VALUE)
                .setParallelism(parallelism)
                .uid("source" + suffix)
                .name("source" + suffix)
                .map(new ToRecord(payload))
                .returns(Types.TUPLE(Types.LONG, Types.STRING))
                .setParallelism(parallelism)
                .uid("to-record" + suffix)
                .name("to-record" + suffix);
    }

    private static long retained(Path jobDir) throws Exception {
        if (!Files.isDirectory(jobDir)) {
            return 0;
        }
        try (var entries = Files.list(jobDir)) {
            return entries.filter(p -> p.getFileName().toString().startsWith("chk-"))
                    .filter(p -> Files.exists(p.resolve("_metadata")))
                    .count();
        }
    }
}
