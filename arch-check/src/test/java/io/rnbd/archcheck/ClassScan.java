package io.rnbd.archcheck;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What the architecture check needs of one class file, read from its bytes: the methods it
 * calls (owner and name, from the constant pool), its own annotations, and its fields with
 * their annotations. Just enough of the class file format (JVMS chapter 4) for that.
 */
final class ClassScan {
    /** A field: its type (binary name, or the descriptor when not an object) and annotation types. */
    record Field(String name, String type, Set<String> annotations) {
    }

    final String name;
    /** {@code owner#method}, owners as binary names ({@code org.osgi.framework.BundleContext}). */
    final Set<String> calls = new HashSet<>();
    /** Binary names of the classes the constant pool names. */
    final Set<String> classRefs = new HashSet<>();
    /** Binary names of the class's own annotations, CLASS retention included. */
    final Set<String> annotations = new HashSet<>();
    final List<Field> fields = new ArrayList<>();

    private final Object[] pool;

    ClassScan(byte[] bytes) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort();
        in.readUnsignedShort();
        int count = in.readUnsignedShort();
        pool = new Object[count];
        int[][] refs = new int[count][];
        int[] tags = new int[count];
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            tags[i] = tag;
            switch (tag) {
                case 1 -> pool[i] = in.readUTF();
                case 3, 4 -> in.readInt();
                case 5, 6 -> {
                    in.readLong();
                    i++;
                }
                case 7, 8, 16, 19, 20 -> refs[i] = new int[] {in.readUnsignedShort()};
                case 9, 10, 11, 12, 17, 18 -> refs[i] = new int[] {in.readUnsignedShort(), in.readUnsignedShort()};
                case 15 -> refs[i] = new int[] {in.readUnsignedByte(), in.readUnsignedShort()};
                default -> throw new IOException("constant pool tag " + tag);
            }
        }
        for (int i = 1; i < count; i++) {
            if (tags[i] == 7) {
                classRefs.add(binary(utf(refs[i][0])));
            } else if (tags[i] == 10 || tags[i] == 11) {
                String owner = binary(utf(refs[refs[i][0]][0]));
                String method = utf(refs[refs[i][1]][0]);
                calls.add(owner + "#" + method);
            }
        }
        in.readUnsignedShort();
        int thisClass = in.readUnsignedShort();
        name = binary(utf(refs[thisClass][0]));
        in.readUnsignedShort();
        int interfaces = in.readUnsignedShort();
        for (int i = 0; i < interfaces; i++) {
            in.readUnsignedShort();
        }
        int fieldCount = in.readUnsignedShort();
        for (int i = 0; i < fieldCount; i++) {
            in.readUnsignedShort();
            String fieldName = utf(in.readUnsignedShort());
            String descriptor = utf(in.readUnsignedShort());
            Set<String> fieldAnnotations = new HashSet<>();
            attributes(in, fieldAnnotations);
            String type = descriptor.startsWith("L") ? binary(descriptor.substring(1, descriptor.length() - 1))
                    : descriptor;
            fields.add(new Field(fieldName, type, fieldAnnotations));
        }
        int methodCount = in.readUnsignedShort();
        for (int i = 0; i < methodCount; i++) {
            in.readUnsignedShort();
            in.readUnsignedShort();
            in.readUnsignedShort();
            attributes(in, new HashSet<>());
        }
        attributes(in, annotations);
    }

    boolean calls(String owner, String method) {
        return calls.contains(owner + "#" + method);
    }

    /** The class this one is nested in, or itself. */
    String outermost() {
        int dollar = name.indexOf('$');
        return dollar < 0 ? name : name.substring(0, dollar);
    }

    String packageName() {
        int dot = name.lastIndexOf('.');
        return dot < 0 ? "" : name.substring(0, dot);
    }

    private void attributes(DataInputStream in, Set<String> annotationsOut) throws IOException {
        int count = in.readUnsignedShort();
        for (int i = 0; i < count; i++) {
            String attr = utf(in.readUnsignedShort());
            int length = in.readInt();
            byte[] body = in.readNBytes(length);
            if (attr.equals("RuntimeVisibleAnnotations") || attr.equals("RuntimeInvisibleAnnotations")) {
                DataInputStream a = new DataInputStream(new ByteArrayInputStream(body));
                int n = a.readUnsignedShort();
                for (int j = 0; j < n; j++) {
                    annotationsOut.add(annotation(a));
                }
            }
        }
    }

    /** Reads one annotation, returns its type; nested values are read past. */
    private String annotation(DataInputStream a) throws IOException {
        String type = utf(a.readUnsignedShort());
        int pairs = a.readUnsignedShort();
        for (int i = 0; i < pairs; i++) {
            a.readUnsignedShort();
            elementValue(a);
        }
        return binary(type.substring(1, type.length() - 1));
    }

    private void elementValue(DataInputStream a) throws IOException {
        int tag = a.readUnsignedByte();
        switch (tag) {
            case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z', 's', 'c' -> a.readUnsignedShort();
            case 'e' -> {
                a.readUnsignedShort();
                a.readUnsignedShort();
            }
            case '@' -> annotation(a);
            case '[' -> {
                int n = a.readUnsignedShort();
                for (int i = 0; i < n; i++) {
                    elementValue(a);
                }
            }
            default -> throw new IOException("element value tag " + (char) tag);
        }
    }

    private String utf(int index) {
        return (String) pool[index];
    }

    private static String binary(String internal) {
        return internal.replace('/', '.');
    }
}
