package io.rnbd.command.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void escapesEverythingThatWouldBreakAString() {
        String nasty = "a\"b\\c\nd\re\tf\bg\fh\u0001i\u001fj\u2028k/é€😀";
        String json = Json.write(Json.obj("k\"ey", nasty));
        assertFalse(json.chars().anyMatch(c -> c < 0x20), json);
        assertEquals(Map.of("k\"ey", nasty), MiniJson.parse(json));
    }

    @Test
    void writesNumbersBooleansNullEnumsAndNesting() {
        Object v = Json.obj("n", 42L, "i", -1, "d", 1.5, "nan", Double.NaN, "t", true, "z", null,
                "e", Thread.State.NEW, "l", List.of(1, "x", List.of()), "o", Json.obj());
        Map<String, Object> back = MiniJson.object(Json.write(v));
        assertEquals(42L, back.get("n"));
        assertEquals(-1L, back.get("i"));
        assertEquals(1.5, back.get("d"));
        assertEquals(null, back.get("nan"));
        assertEquals(true, back.get("t"));
        assertEquals("NEW", back.get("e"));
        assertEquals(Arrays.asList(1L, "x", List.of()), back.get("l"));
        assertEquals(Map.of(), back.get("o"));
        assertEquals("[]", Json.write(List.of()));
    }
}
