import org.apache.flink.runtime.checkpoint.RescaleMappings;
import org.apache.flink.runtime.io.network.api.writer.SubtaskStateMapper;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.util.MathUtils;

import java.util.*;

/** Prints reference values of Flink's key-group and rescale arithmetic as JSON (stdout). */
public class FlinkArithmeticReference {
    static StringBuilder out = new StringBuilder();

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String arr(int[] a) { return Arrays.toString(a); }

    public static void main(String[] args) {
        Random rnd = new Random(20261122L);
        List<String> sections = new ArrayList<>();

        // murmurHash over ints
        List<Integer> ints = new ArrayList<>(Arrays.asList(0, 1, -1, 2, 7, 10, 42, 45, 90, 99, 100, 1000,
                123456789, -123456789, Integer.MAX_VALUE, Integer.MIN_VALUE, Integer.MIN_VALUE + 1));
        for (int i = 0; i < 300; i++) ints.add(rnd.nextInt());
        StringBuilder m = new StringBuilder("\"murmur_hash\": [");
        for (int i = 0; i < ints.size(); i++) {
            int v = ints.get(i);
            m.append(i == 0 ? "" : ",").append("[").append(v).append(",").append(MathUtils.murmurHash(v)).append("]");
        }
        sections.add(m.append("]").toString());

        // hashCode of boxed keys
        List<String> hc = new ArrayList<>();
        for (int v : ints) hc.add("[\"int\"," + v + "," + Integer.valueOf(v).hashCode() + "]");
        List<Long> longs = new ArrayList<>(Arrays.asList(0L, 1L, -1L, 42L, 4294967296L, -4294967296L, 4294967295L,
                Long.MAX_VALUE, Long.MIN_VALUE, 4611686018427387904L, 4611686018427388903L, 999L));
        for (int i = 0; i < 300; i++) longs.add(rnd.nextLong());
        for (long v : longs) hc.add("[\"long\"," + v + "," + Long.valueOf(v).hashCode() + "]");
        String[] strings = {"", "a", "key", "hello world", "p42", "Flink", "\u00e9t\u00e9", "\u65e5\u672c\u8a9e",
                "\ud83d\ude00 emoji", "\u0000nul", "a much longer string key that overflows the 32 bit hash many times over"};
        for (String s : strings) hc.add("[\"string\"," + q(s) + "," + s.hashCode() + "]");
        for (int i = 0; i < 100; i++) {
            int len = rnd.nextInt(40);
            char[] cs = new char[len];
            for (int j = 0; j < len; j++) cs[j] = (char) (rnd.nextInt(3) == 0 ? rnd.nextInt(0xd7ff) : 0x20 + rnd.nextInt(95));
            String s = new String(cs);
            hc.add("[\"string\"," + q(s) + "," + s.hashCode() + "]");
        }
        hc.add("[\"boolean\",true," + Boolean.TRUE.hashCode() + "]");
        hc.add("[\"boolean\",false," + Boolean.FALSE.hashCode() + "]");
        for (short v : new short[] {0, 1, -1, Short.MAX_VALUE, Short.MIN_VALUE}) hc.add("[\"short\"," + v + "," + Short.valueOf(v).hashCode() + "]");
        for (byte v : new byte[] {0, 1, -1, Byte.MAX_VALUE, Byte.MIN_VALUE}) hc.add("[\"byte\"," + v + "," + Byte.valueOf(v).hashCode() + "]");
        for (char v : new char[] {'a', 'Z', '\u00e9', '\uffff'}) hc.add("[\"char\"," + (int) v + "," + Character.valueOf(v).hashCode() + "]");
        for (double v : new double[] {0.0, -0.0, 1.0, -1.5, 3.141592653589793, 1e300, Double.MIN_VALUE})
            hc.add("[\"double\"," + v + "," + Double.valueOf(v).hashCode() + "]");
        hc.add("[\"double\",\"NaN\"," + Double.valueOf(Double.NaN).hashCode() + "]");
        hc.add("[\"double\",\"Infinity\"," + Double.valueOf(Double.POSITIVE_INFINITY).hashCode() + "]");
        for (float v : new float[] {0.0f, -0.0f, 1.0f, -1.5f, 3.1415927f})
            hc.add("[\"float\"," + v + "," + Float.valueOf(v).hashCode() + "]");
        hc.add("[\"float\",\"NaN\"," + Float.valueOf(Float.NaN).hashCode() + "]");
        sections.add("\"hash_code\": [" + String.join(",", hc) + "]");

        // assignToKeyGroup / assignKeyToParallelOperator
        List<String> kg = new ArrayList<>();
        int[][] mp = {{10, 2}, {10, 3}, {128, 1}, {128, 3}, {128, 4}, {128, 7}, {256, 100}, {1000, 7}, {32768, 12}, {32768, 32768}};
        for (int[] pair : mp) {
            for (int i = 0; i < 40; i++) {
                int v = ints.get(i);
                kg.add("[\"int\"," + v + "," + pair[0] + "," + pair[1] + "," + KeyGroupRangeAssignment.assignToKeyGroup(v, pair[0]) + "," + KeyGroupRangeAssignment.assignKeyToParallelOperator(v, pair[0], pair[1]) + "]");
            }
            for (int i = 0; i < 20; i++) {
                long v = longs.get(i);
                kg.add("[\"long\"," + v + "," + pair[0] + "," + pair[1] + "," + KeyGroupRangeAssignment.assignToKeyGroup(v, pair[0]) + "," + KeyGroupRangeAssignment.assignKeyToParallelOperator(v, pair[0], pair[1]) + "]");
            }
            for (String s : strings) {
                kg.add("[\"string\"," + q(s) + "," + pair[0] + "," + pair[1] + "," + KeyGroupRangeAssignment.assignToKeyGroup(s, pair[0]) + "," + KeyGroupRangeAssignment.assignKeyToParallelOperator(s, pair[0], pair[1]) + "]");
            }
        }
        sections.add("\"assign\": [" + String.join(",", kg) + "]");

        // key-group ranges
        List<String> ranges = new ArrayList<>();
        int[] maxPs = {1, 2, 7, 10, 128, 129, 1000, 4096, 32768};
        int[] ps = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 13, 100, 127, 128, 129, 1000, 4095, 32767, 32768};
        for (int maxP : maxPs) for (int p : ps) {
            if (p > maxP) continue;
            if (maxP > 1000 && !(p == 1 || p == 3 || p == 7 || p == 100 || p == 4095)) continue;
            StringBuilder r = new StringBuilder("[" + maxP + "," + p + ",[");
            for (int i = 0; i < p; i++) {
                KeyGroupRange range = KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(maxP, p, i);
                r.append(i == 0 ? "" : ",").append("[").append(range.getStartKeyGroup()).append(",").append(range.getEndKeyGroup()).append("]");
            }
            r.append("],[");
            for (int g = 0; g < maxP && maxP <= 1000; g++) r.append(g == 0 ? "" : ",").append(KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup(maxP, p, g));
            ranges.add(r.append("]]").toString());
        }
        sections.add("\"key_group_ranges\": [" + String.join(",", ranges) + "]");

        List<String> dmp = new ArrayList<>();
        for (int p : new int[] {1, 2, 42, 85, 86, 100, 170, 171, 172, 341, 342, 1000, 10922, 10923, 21844, 21845, 21846, 32768})
            dmp.add("[" + p + "," + KeyGroupRangeAssignment.computeDefaultMaxParallelism(p) + "]");
        sections.add("\"default_max_parallelism\": [" + String.join(",", dmp) + "]");

        // subtask state mappers
        List<String> maps = new ArrayList<>();
        for (SubtaskStateMapper mapper : SubtaskStateMapper.values()) {
            if (mapper == SubtaskStateMapper.UNSUPPORTED || mapper.name().equals("POINTWISE_UPSTREAM")) continue;
            for (int oldP = 1; oldP <= 12; oldP++) for (int newP = 1; newP <= 12; newP++) {
                RescaleMappings rm = mapper.getNewToOldSubtasksMapping(oldP, newP);
                StringBuilder s = new StringBuilder("{\"mapper\":\"" + mapper + "\",\"old\":" + oldP + ",\"new\":" + newP + ",\"rows\":[");
                for (int n = 0; n < newP; n++) s.append(n == 0 ? "" : ",").append(arr(rm.getMappedIndexes(n)));
                s.append("],\"identity\":").append(rm.isIdentity());
                s.append(",\"ambiguous_mapper\":").append(mapper.isAmbiguous());
                TreeSet<Integer> amb = new TreeSet<>(rm.getAmbiguousTargets());
                s.append(",\"ambiguous_targets\":").append(amb.toString());
                RescaleMappings inv = rm.invert();
                s.append(",\"inverted\":[");
                for (int o = 0; o < oldP; o++) s.append(o == 0 ? "" : ",").append(arr(inv.getMappedIndexes(o)));
                s.append("],\"inverted_identity\":").append(inv.isIdentity()).append("}");
                maps.add(s.toString());
            }
        }
        sections.add("\"subtask_state_mappers\": [" + String.join(",\n", maps) + "]");

        System.out.println("{\"flink_version\": \"2.3.0\",\n" + String.join(",\n", sections) + "\n}");
    }
}
