//! One worker's PostgreSQL connection (tokio-postgres), as in TFB's actix entries: the
//! connection task runs on the worker's own single-threaded runtime, the statements are
//! prepared once at connect, and concurrent queries are pipelined on the connection.
use futures_util::future::try_join_all;
use tokio_postgres::{Client, NoTls, Statement};

use crate::util::{random_id, World, EXTRA_FORTUNE};

pub struct Db {
    client: Client,
    world: Statement,
    fortune: Statement,
    update: Statement,
    /// /cached-queries: randomnumber by id (index 0 unused), read once at connect.
    cache: Vec<i32>,
}

pub type DbResult<T> = Result<T, tokio_postgres::Error>;

/// An error with its cause ("error connecting to server: Connection refused ...").
pub fn describe(e: &tokio_postgres::Error) -> String {
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

impl Db {
    pub async fn connect(url: &str) -> DbResult<Db> {
        let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
        actix_rt::spawn(async move {
            if let Err(e) = connection.await {
                eprintln!("tfb-actix: database connection: {e}");
            }
        });
        let world = client.prepare("SELECT id, randomnumber FROM world WHERE id = $1").await?;
        let fortune = client.prepare("SELECT id, message FROM fortune").await?;
        // All rows of one /updates request in one statement; ids arrive sorted so that
        // concurrent requests lock rows in the same order.
        let update = client
            .prepare(
                "UPDATE world SET randomnumber = v.r \
                 FROM (SELECT unnest($1::int[]) AS id, unnest($2::int[]) AS r) AS v \
                 WHERE world.id = v.id",
            )
            .await?;
        let mut cache = vec![0; 10_001];
        for row in client.query("SELECT id, randomnumber FROM world", &[]).await? {
            let id: i32 = row.get(0);
            if (1..=10_000).contains(&id) {
                cache[id as usize] = row.get(1);
            }
        }
        Ok(Db { client, world, fortune, update, cache })
    }

    pub async fn world(&self) -> DbResult<World> {
        self.fetch(random_id()).await
    }

    async fn fetch(&self, id: i32) -> DbResult<World> {
        let row = self.client.query_one(&self.world, &[&id]).await?;
        Ok(World { id: row.get(0), random_number: row.get(1) })
    }

    /// n SELECTs, one per random id, sent back to back without waiting (pipelined).
    pub async fn worlds(&self, n: usize) -> DbResult<Vec<World>> {
        try_join_all((0..n).map(|_| self.fetch(random_id()))).await
    }

    /// Reads n rows (one SELECT each), gives each a new random number, writes them back
    /// in one UPDATE ordered by id, and returns the rows with their new numbers.
    pub async fn update(&self, n: usize) -> DbResult<Vec<World>> {
        let mut worlds = self.worlds(n).await?;
        for w in worlds.iter_mut() {
            w.random_number = random_id();
        }
        let mut sorted = worlds.clone();
        sorted.sort_unstable_by_key(|w| w.id);
        let ids: Vec<i32> = sorted.iter().map(|w| w.id).collect();
        let numbers: Vec<i32> = sorted.iter().map(|w| w.random_number).collect();
        self.client.execute(&self.update, &[&ids, &numbers]).await?;
        Ok(worlds)
    }

    /// All fortunes plus the one added at request time, sorted by message.
    pub async fn fortunes(&self) -> DbResult<Vec<(i32, String)>> {
        let rows = self.client.query(&self.fortune, &[]).await?;
        let mut fortunes: Vec<(i32, String)> =
            rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        fortunes.push((0, EXTRA_FORTUNE.to_string()));
        fortunes.sort_unstable_by(|a, b| a.1.cmp(&b.1));
        Ok(fortunes)
    }

    pub fn cached(&self, n: usize) -> Vec<World> {
        (0..n)
            .map(|_| {
                let id = random_id();
                World { id, random_number: self.cache[id as usize] }
            })
            .collect()
    }
}
