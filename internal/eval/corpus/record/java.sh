#!/usr/bin/env bash
# Re-records the java family: javac diagnostics, runtime exceptions with stack
# traces, JUnit 5 (console launcher) and JUnit 4 (JUnitCore) runs, Maven
# offline (its own offline error, then Debian's local repository), and Debian's
# Gradle 4.4.
#
# Needs: OpenJDK 17 (javac, java), Maven 3.8 and, from Debian: junit4 junit5
# maven-debian-helper libmaven-compiler-plugin-java libsurefire-java
# libmaven-resources-plugin-java libmaven-jar-plugin-java gradle
#   apt-get install junit4 junit5 maven-debian-helper libmaven-compiler-plugin-java \
#     libsurefire-java libmaven-resources-plugin-java libmaven-jar-plugin-java gradle
# Maven Central must be unreachable (`mvn -o` records Maven's own offline
# error; the other Maven cases use /etc/maven/settings-debian.xml, which points
# at /usr/share/maven-repo). Gradle runs with --no-daemon so nothing is left
# running. Everything builds in the work dir copy (out/, target/, build/).
#
# Run: bash internal/eval/corpus/record/java.sh   (from anywhere; ~2 minutes)
source "$(dirname "$0")/lib.sh"

JAVAC="javac -version"
JAVA="java -version 2>&1 | head -n 1"
SA=/usr/share/java/junit-platform-console-standalone.jar
J4=/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar
BUILD_MAIN='javac -d out $(find src/main/java -name "*.java")'
BUILD_TESTS="javac -d out-test -cp out:$SA:$J4 \$(find src/test/java -name '*.java')"

# --- java-catalog: compile errors.
record java javac-cannot-find-symbol java-catalog javac "$JAVAC" -- \
  'javac -d out $(find src -name "*.java")'
record java javac-flow-errors java-catalog javac "$JAVAC" -- javac -d out tools/StockReport.java
record java javac-syntax-errors java-catalog javac "$JAVAC" -- javac -d out tools/CsvSplit.java
record java javac-xlint-warnings-and-error java-catalog javac "$JAVAC" -- \
  javac -Xlint:all -d out tools/LegacyCache.java
record java javac-notes-success java-catalog javac "$JAVAC" -- javac -d out tools/Stats.java
record java mvn-compile-error java-catalog mvn "mvn -B -v 2>/dev/null | grep -m1 -o 'Apache Maven [0-9.]*'" -- \
  mvn -B -s /etc/maven/settings-debian.xml compile

# --- java-billing: runtime exceptions, tests, builds.
record java run-ok java-billing java "$JAVA" -- \
  "$BUILD_MAIN && java -cp out com.acme.billing.Main by-country data/march.csv"
record java npe-inside-stream java-billing java "$JAVA" -- \
  "$BUILD_MAIN && java -cp out com.acme.billing.Main total data/april.csv"
record java npe-helpful-message java-billing java "$JAVA" -- \
  "$BUILD_MAIN && java -cp out com.acme.billing.Main vat-ids data/march.csv"
record java array-index-out-of-bounds java-billing java "$JAVA" -- \
  "$BUILD_MAIN && java -cp out com.acme.billing.Main top-skus data/march.csv 5"
record java caused-by-chain java-billing java "$JAVA" -- \
  "$BUILD_MAIN && java -cp out com.acme.billing.Main total data/june.csv"
record java junit5-console-failures java-billing java "$JAVA" -- \
  "$BUILD_MAIN && $BUILD_TESTS && java -jar $SA -cp out:out-test:$J4 --scan-classpath out-test"
record java junit5-console-pass java-billing java "$JAVA" -- \
  "$BUILD_MAIN && $BUILD_TESTS && java -jar $SA --disable-banner --disable-ansi-colors -cp out:out-test --select-class com.acme.billing.CustomerTest"
record java junit4-runner java-billing java "$JAVA" -- \
  "$BUILD_MAIN && $BUILD_TESTS && java -cp out:out-test:$J4 org.junit.runner.JUnitCore com.acme.billing.LegacyInvoiceTotalsTest"
record java mvn-offline-missing-plugin java-billing mvn "mvn -B -v 2>/dev/null | grep -m1 -o 'Apache Maven [0-9.]*'" -- mvn -o test
record java mvn-surefire-failures java-billing mvn "mvn -B -v 2>/dev/null | grep -m1 -o 'Apache Maven [0-9.]*'" -- \
  mvn -B -s /etc/maven/settings-debian.xml test
record java gradle-old-source-level java-billing gradle "gradle --version 2>/dev/null | grep '^Gradle'" -- \
  gradle --offline --no-daemon test
record java cat-source java-billing cat "cat --version | head -n 1" -- \
  cat -n src/main/java/com/acme/billing/InvoiceService.java
