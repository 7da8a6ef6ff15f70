-- Hand-written migration: the schema.prisma copy next to this file is unchanged.
-- Every cycle rewrites the pending reason and position of the jobs left waiting. None of those columns is
-- indexed, so with free space in each page Postgres updates them in place (HOT) instead of adding an
-- entry to each of the 5 indexes of jobs. Prisma does not model storage parameters.
ALTER TABLE "jobs" SET (fillfactor = 80);
