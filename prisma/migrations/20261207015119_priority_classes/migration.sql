-- AlterTable
ALTER TABLE "teams" ADD COLUMN     "max_priority_class" TEXT;

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "priority_class" TEXT;

-- CreateTable
CREATE TABLE "priority_classes" (
    "name" TEXT NOT NULL,
    "value" INTEGER NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "is_default" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "priority_classes_pkey" PRIMARY KEY ("name")
);

-- AddForeignKey
ALTER TABLE "teams" ADD CONSTRAINT "teams_max_priority_class_fkey" FOREIGN KEY ("max_priority_class") REFERENCES "priority_classes"("name") ON DELETE RESTRICT ON UPDATE CASCADE;
