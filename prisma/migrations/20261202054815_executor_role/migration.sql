-- AlterEnum
ALTER TYPE "role" ADD VALUE 'executor';
