package kiln.bench.generic;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpSession;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.CacheControl;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The session study's generic web application on Spring Boot (embedded Tomcat).
 * GET / prints the page with the visitor's HttpSession id: Tomcat creates the session
 * on the first visit and finds it again by its JSESSIONID cookie (Tomcat's in-memory
 * session manager, one JVM). Static files come from Spring's resource handler
 * (spring.web.resources.static-locations); POST /upload reads the whole body.
 */
@SpringBootApplication
@RestController
public class GenericApplication {
    private final String head;

    public GenericApplication(@Value("${generic.lorem}") String loremFile) throws IOException {
        String loremIpsum = Files.readString(Path.of(loremFile), StandardCharsets.UTF_8);
        head = "<!DOCTYPE html>"
                + "<html>"
                + "<head>"
                + "<meta charset=\"UTF-8\">"
                + "<link rel=\"stylesheet\" type=\"text/css\" href=\"/bootstrap.css\">"
                + "<title>Generic Web Application</title>"
                + "</head>"
                + "<body>"
                + "<h1>Generic Web Application</h1>"
                + "<img src=\"/servers.jpg\" width=\"700\">"
                + "<h2>Lorem Ipsum</h2>"
                + loremIpsum;
    }

    @GetMapping(value = "/", produces = "text/html;charset=UTF-8")
    public ResponseEntity<String> index(HttpSession session) {
        return ResponseEntity.ok()
                .cacheControl(CacheControl.noStore())
                .body(head + "<p>" + session.getId() + "</p></body></html>");
    }

    @PostMapping(value = "/upload", produces = "text/plain;charset=UTF-8")
    public String upload(HttpSession session, HttpServletRequest request) throws IOException {
        // A multipart body has already been read by Spring's multipart resolver; any
        // other body is read here.
        request.getInputStream().transferTo(OutputStream.nullOutputStream());
        return "Data accepted";
    }

    public static void main(String[] args) {
        SpringApplication.run(GenericApplication.class, args);
    }
}
