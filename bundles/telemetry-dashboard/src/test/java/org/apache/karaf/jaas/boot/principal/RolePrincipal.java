package org.apache.karaf.jaas.boot.principal;

import java.security.Principal;

/** Stands in for Karaf's role principal, which JaasLogin recognises by this class name. */
public record RolePrincipal(String getName) implements Principal {
}
