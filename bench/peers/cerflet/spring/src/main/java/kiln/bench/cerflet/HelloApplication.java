package kiln.bench.cerflet;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Cerflet's hello page (seeds/004) on Spring Boot with embedded Tomcat: GET / answers
 * the same 99 bytes as text/html. Tomcat's defaults (200 request threads), JVM defaults;
 * the port comes from --server.port (run.sh), the rest from application.properties.
 */
@SpringBootApplication
@RestController
public class HelloApplication {
    private static final String PAGE =
            "<!DOCTYPE html><html><head><title>Hello World</title></head>"
            + "<body><p>Hello World!</p></body></html>";

    @GetMapping("/")
    public ResponseEntity<String> hello() {
        return ResponseEntity.ok().contentType(MediaType.TEXT_HTML).body(PAGE);
    }

    public static void main(String[] args) {
        SpringApplication.run(HelloApplication.class, args);
    }
}
